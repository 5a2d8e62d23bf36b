/* Sizes with K/M/G suffixes (powers of 1024) and comma lists. */
#ifndef BENCH_SIZES_H
#define BENCH_SIZES_H

#include <stddef.h>
#include <stdint.h>

/* "1M" -> 1048576, "64" -> 64, "1.5K" -> 1536 (must be a whole number of bytes).
 * COLL_EINVAL on empty input, bad suffix, negative, overflow; err says why. */
int bench_parse_size(const char *s, uint64_t *out, char *err, size_t errlen);
/* "1M,10M,100M" -> array (malloc'd). */
int bench_parse_size_list(const char *s, uint64_t **out, size_t *n, char *err, size_t errlen);
/* "2,4,6" -> positive ints (malloc'd); zero or negative rejected. */
int bench_parse_int_list(const char *s, int **out, size_t *n, char *err, size_t errlen);
/* Human form for tables: 1048576 -> "1M", 1536 -> "1.5K". */
void bench_format_size(uint64_t bytes, char *buf, size_t len);

#endif
