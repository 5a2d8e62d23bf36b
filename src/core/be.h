/* Big-endian integers in byte buffers: the socket store's wire format, the file
 * store's records, SHA-256's words. */
#ifndef COLL_BE_H
#define COLL_BE_H

#include <stdint.h>

static inline void coll__be_put_u32(unsigned char *p, uint32_t v)
{
    p[0] = (unsigned char)(v >> 24);
    p[1] = (unsigned char)(v >> 16);
    p[2] = (unsigned char)(v >> 8);
    p[3] = (unsigned char)v;
}

static inline uint32_t coll__be_get_u32(const unsigned char *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static inline void coll__be_put_u64(unsigned char *p, uint64_t v)
{
    coll__be_put_u32(p, (uint32_t)(v >> 32));
    coll__be_put_u32(p + 4, (uint32_t)v);
}

static inline uint64_t coll__be_get_u64(const unsigned char *p)
{
    return (uint64_t)coll__be_get_u32(p) << 32 | coll__be_get_u32(p + 4);
}

#endif
