/* See populate.h. */
#include "core/populate.h"

#include <stdint.h>
#include <sys/mman.h>
#include <unistd.h>

#ifndef MADV_POPULATE_READ
#define MADV_POPULATE_READ 22
#define MADV_POPULATE_WRITE 23
#endif

void coll__populate(void *p, size_t bytes, int for_write)
{
    if (!p || !bytes) return;
    uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
    uintptr_t a = (uintptr_t)p & ~(page - 1);
    uintptr_t b = ((uintptr_t)p + bytes + page - 1) & ~(page - 1);
    (void)madvise((void *)a, b - a, for_write ? MADV_POPULATE_WRITE : MADV_POPULATE_READ);
}

void coll__touch(const void *p, size_t bytes)
{
    if (!p || !bytes) return;
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    const volatile unsigned char *c = p;
    unsigned char sink = 0;
    for (size_t i = 0; i < bytes; i += page) sink ^= c[i];
    sink ^= c[bytes - 1];
    (void)sink;
}
