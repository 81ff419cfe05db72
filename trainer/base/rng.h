/* rng.h - the trainer's one random number generator (xoshiro256**,
 * seeded by splitmix64): parameter init, synthetic data, shuffling.
 * Deterministic in the seed and savable (checkpoints keep the 4 words).
 * What this is not: a cryptographic generator.
 */
#ifndef HVD_TRAINER_RNG_H
#define HVD_TRAINER_RNG_H

#include <stdint.h>

struct rng {
	uint64_t s[4];
};

void rng_seed(struct rng *r, uint64_t seed);
uint64_t rng_next(struct rng *r);
double rng_uniform(struct rng *r);          /* [0, 1) */
double rng_normal(struct rng *r);           /* mean 0, std 1 (Box-Muller) */

#endif
