/* engine/mailbox.h - what the engine and the control thread ask of each
 * other about the engines' agreement (engine/agree.c), as a small queue
 * under the runtime lock instead of flag + position pairs:
 *   MAIL_NEGOTIATE  engine -> control: the engines disagreed at pos; rank
 *                   0 negotiates from there on
 *   MAIL_WAITING    engine -> control: this rank's vote at pos waits for
 *                   another rank (rank 0 nudges every engine)
 *   MAIL_NUDGE      control -> engine: vote at pos now
 * A mail of a kind already queued replaces it where it stands (the later
 * position is the one that counts), so the queue holds at most one mail
 * of each kind and is never full. Mails are taken oldest first.
 * What it does not do: lock or wake anyone (runtime_post in state.c).
 */
#ifndef HVD_MAILBOX_H
#define HVD_MAILBOX_H

#include <stdint.h>

enum mail_kind { MAIL_NEGOTIATE = 1, MAIL_WAITING = 2, MAIL_NUDGE = 4 };
#define MAIL_TO_CONTROL (MAIL_NEGOTIATE | MAIL_WAITING)
#define MAILBOX_SLOTS 3

struct mail {
	enum mail_kind kind;
	uint64_t pos;
};

struct mailbox {
	struct mail m[MAILBOX_SLOTS]; /* oldest first */
	int n;
};

/* Queues (or replaces) a mail of kind at pos. */
void mailbox_put(struct mailbox *b, enum mail_kind kind, uint64_t pos);
/* The oldest mail of the kinds (a mask), removed: 1, or 0 when none. */
int mailbox_take(struct mailbox *b, int kinds, struct mail *out);
/* 1 when a mail of kind at pos is queued (left there). */
int mailbox_has(const struct mailbox *b, enum mail_kind kind, uint64_t pos);

#endif
