/* data/sets/split.c - patient-wise validation split. Pure.
 * What it does not do: read lists, make the key or decide val_fraction.
 */
#include <stdlib.h>
#include <string.h>

#include "base/siphash.h"
#include "data/sets/split.h"

uint64_t data_hash64(uint64_t x)
{
	x += 0x9E3779B97F4A7C15ull;
	x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
	x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
	return x ^ (x >> 31);
}

int data_split_is_val(const uint8_t key[16], uint32_t patient, double val_fraction)
{
	uint8_t msg[8] = "val";
	for (int i = 0; i < 4; i++)
		msg[4 + i] = (uint8_t)(patient >> (8 * i));
	/* the top 53 bits as a uniform number in [0, 1) */
	return (double)(siphash24(key, msg, sizeof(msg)) >> 11) * 0x1p-53 < val_fraction;
}

int data_split_by_patient(struct data_list *train, struct data_list *val, const uint8_t key[16],
			  double val_fraction)
{
	size_t keep = 0;
	if (val_fraction <= 0)
		return 0;
	for (size_t i = 0; i < train->count; i++) {
		struct data_entry *e = &train->items[i];
		if (!data_split_is_val(key, e->patient, val_fraction)) {
			train->items[keep++] = *e;
			continue;
		}
		struct data_entry *v = data_list_push(val);
		if (!v)
			return -1;   /* out of memory: the set is freed by the caller */
		*v = *e;
	}
	train->count = keep;
	return 0;
}
