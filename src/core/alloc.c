/* Aligned heap memory (see alloc.h). */
#include "core/alloc.h"

#include <stdlib.h>

void *coll__alloc_aligned_to(size_t align, size_t bytes)
{
    void *p = NULL;
    if (posix_memalign(&p, align, bytes ? bytes : 1)) return NULL;
    return p;
}

void *coll__alloc_aligned(size_t bytes)
{
    return coll__alloc_aligned_to(bytes >= 65536 ? 4096 : 64, bytes);
}
