/* data/load/order.c - epoch permutation (cycle-walking Feistel), micro-batch
 * layout and augmentation bits. Pure. What it does not do: anything
 * stateful; the loader calls these from every worker.
 */
#include "data/load/order.h"
#include "data/sets/split.h"

int data_plan_init(struct data_plan *p, uint64_t records, int world, int batch,
		   int accumulation, int train, const char **why)
{
	p->records = records;
	p->world = world;
	p->batch = batch;
	p->accumulation = accumulation;
	p->train = train;
	if (world < 1 || batch < 1 || accumulation < 1)
		return *why = "world size, batch and accumulation must be >= 1", -1;
	uint64_t group = (uint64_t)world * (uint64_t)batch;
	if (train) {
		uint64_t step = group * (uint64_t)accumulation;
		p->used = records / step * step;
		if (p->used == 0)
			return *why = "fewer training records than world size x batch x accumulation", -1;
		p->micro_per_epoch = (long)(p->used / group);
	} else {
		if (records == 0)
			return *why = "the split has no records", -1;
		p->used = records;
		p->micro_per_epoch = (long)((records + group - 1) / group);
	}
	return 0;
}

uint64_t data_plan_position(const struct data_plan *p, int rank, long micro, int slot)
{
	return ((uint64_t)micro * (uint64_t)p->world + (uint64_t)rank) * (uint64_t)p->batch +
	       (uint64_t)slot;
}

int64_t data_plan_record(const struct data_plan *p, uint64_t seed, int epoch,
			 uint64_t position)
{
	if (!p->train)
		return position < p->records ? (int64_t)position : -1;
	return (int64_t)data_order_permute(seed, epoch, p->records, position);
}

static uint64_t round_key(uint64_t seed, int epoch, int round)
{
	return data_hash64(seed ^ data_hash64(((uint64_t)(uint32_t)epoch << 8) | (uint64_t)round));
}

uint64_t data_order_permute(uint64_t seed, int epoch, uint64_t n, uint64_t position)
{
	int half = 1;
	while (half < 32 && (1ull << (2 * half)) < n)
		half++;
	const uint64_t mask = (1ull << half) - 1;
	uint64_t keys[4];
	for (int r = 0; r < 4; r++)
		keys[r] = round_key(seed, epoch, r);
	uint64_t x = position;
	do {
		uint64_t left = x >> half, right = x & mask;
		for (int r = 0; r < 4; r++) {
			uint64_t next = left ^ (data_hash64(right ^ keys[r]) & mask);
			left = right;
			right = next;
		}
		x = (left << half) | right;
	} while (x >= n);
	return x;
}

uint64_t data_order_aug_bits(uint64_t seed, int epoch, uint64_t position)
{
	return data_hash64(data_hash64(seed ^ 0xA5A5A5A5A5A5A5A5ull) ^
			   data_hash64(((uint64_t)(uint32_t)epoch << 40) ^ position));
}
