/* Counter-based random numbers (splitmix64): value i of stream s depends on
 * (s, i) only, so any rank can generate any sample or weight without a shared
 * generator state, and runs are reproducible from --seed. */
#ifndef TRAIN_RNG_H
#define TRAIN_RNG_H

#include <stdint.h>

static inline uint64_t train_mix64(uint64_t z)
{
    z += 0x9e3779b97f4a7c15ull;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* Uniform in [-1, 1) for element i of stream key. */
static inline float train_uniform(uint64_t key, uint64_t i)
{
    uint64_t r = train_mix64(key ^ train_mix64(i));
    return (float)((double)(r >> 40) * (1.0 / 8388608.0) - 1.0);
}

#endif
