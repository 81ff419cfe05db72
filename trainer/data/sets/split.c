/* data/sets/split.c - patient-wise validation split. Pure.
 * What it does not do: read lists or decide val_fraction.
 */
#include <stdlib.h>
#include <string.h>

#include "data/sets/split.h"

uint64_t data_hash64(uint64_t x)
{
	x += 0x9E3779B97F4A7C15ull;
	x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
	x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
	return x ^ (x >> 31);
}

struct patient { uint64_t key; uint32_t id; size_t images; };

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	return (x > y) - (x < y);
}

static int cmp_patient_key(const void *a, const void *b)
{
	const struct patient *x = a, *y = b;
	if (x->key != y->key)
		return (x->key > y->key) - (x->key < y->key);
	return (x->id > y->id) - (x->id < y->id);
}

/* Sorted unique patient ids of l with their image counts. */
static struct patient *count_patients(const struct data_list *l, size_t *count)
{
	uint32_t *ids = malloc((l->count + 1) * sizeof(*ids));
	struct patient *p = malloc((l->count + 1) * sizeof(*p));
	size_t n = 0;
	if (!ids || !p) {
		free(ids);
		free(p);
		return NULL;
	}
	for (size_t i = 0; i < l->count; i++)
		ids[i] = l->items[i].patient;
	qsort(ids, l->count, sizeof(*ids), cmp_u32);
	for (size_t i = 0; i < l->count; i++) {
		if (n && p[n - 1].id == ids[i]) {
			p[n - 1].images++;
			continue;
		}
		p[n].id = ids[i];
		p[n].key = data_hash64(ids[i]);
		p[n++].images = 1;
	}
	free(ids);
	*count = n;
	return p;
}

int data_split_by_patient(struct data_list *train, struct data_list *val,
			  double val_fraction)
{
	size_t np = 0;
	if (val_fraction <= 0 || train->count == 0)
		return 0;
	struct patient *p = count_patients(train, &np);
	if (!p)
		return -1;
	qsort(p, np, sizeof(*p), cmp_patient_key);
	size_t want = (size_t)(val_fraction * (double)train->count + 0.5), got = 0, chosen = 0;
	uint32_t *val_ids = malloc((np + 1) * sizeof(*val_ids));
	if (!val_ids) {
		free(p);
		return -1;
	}
	while (chosen < np && got < want) {
		got += p[chosen].images;
		val_ids[chosen] = p[chosen].id;
		chosen++;
	}
	free(p);
	qsort(val_ids, chosen, sizeof(*val_ids), cmp_u32);
	size_t keep = 0;
	int rc = 0;
	for (size_t i = 0; i < train->count; i++) {
		struct data_entry *e = &train->items[i];
		if (bsearch(&e->patient, val_ids, chosen, sizeof(*val_ids), cmp_u32)) {
			struct data_entry *v = data_list_push(val);
			if (!v) {
				rc = -1;
				break;
			}
			*v = *e;
		} else {
			train->items[keep++] = *e;
		}
	}
	if (rc == 0)
		train->count = keep;
	free(val_ids);
	return rc;
}
