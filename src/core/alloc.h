/* Aligned heap memory, released with free(). */
#ifndef COLL_ALLOC_H
#define COLL_ALLOC_H

#include <stddef.h>

/* bytes (0 counts as 1) aligned to align, a power of two and a multiple of
 * sizeof(void *); NULL when out of memory. */
void *coll__alloc_aligned_to(size_t align, size_t bytes);

/* coll_alloc's private memory (the core's and the backends' fallback):
 * page-aligned from 64 KiB on, cache-line aligned below. */
void *coll__alloc_aligned(size_t bytes);

#endif
