/* engine/mailbox.c - the engine <-> control queue (mailbox.h). */
#include <string.h>

#include "engine/mailbox.h"

void mailbox_put(struct mailbox *b, enum mail_kind kind, uint64_t pos)
{
	for (int i = 0; i < b->n; i++)
		if (b->m[i].kind == kind) {
			b->m[i].pos = pos;
			return;
		}
	b->m[b->n++] = (struct mail){ kind, pos }; /* one per kind: never full */
}

int mailbox_take(struct mailbox *b, int kinds, struct mail *out)
{
	for (int i = 0; i < b->n; i++)
		if (b->m[i].kind & kinds) {
			*out = b->m[i];
			memmove(&b->m[i], &b->m[i + 1], (size_t)(b->n - i - 1) * sizeof(b->m[0]));
			b->n--;
			return 1;
		}
	return 0;
}

int mailbox_has(const struct mailbox *b, enum mail_kind kind, uint64_t pos)
{
	for (int i = 0; i < b->n; i++)
		if (b->m[i].kind == kind && b->m[i].pos == pos)
			return 1;
	return 0;
}
