/* Sizes with K/M/G suffixes (powers of 1024) and comma lists. */
#ifndef BENCH_SIZES_H
#define BENCH_SIZES_H

#include <stddef.h>
#include <stdint.h>

/* "1M" -> 1048576, "64" -> 64, "1.5K" -> 1536 (must be a whole number of bytes).
 * Suffixes K, M, G, T in either case, optionally followed by B or iB: all powers
 * of 1024 ("1MB" = "1MiB" = "1m"); a bare "B" is bytes. Blanks around are ignored.
 * COLL_EINVAL on empty input, bad suffix, negative, fractions of a byte, 2^63 or
 * more; err says why and quotes the input. */
int bench_parse_size(const char *s, uint64_t *out, char *err, size_t errlen);
/* "1M,10M,100M" -> array (malloc'd); empty items ("1M,,2M", "1M,") are errors.
 * On error *out = NULL, *n = 0. */
int bench_parse_size_list(const char *s, uint64_t **out, size_t *n, char *err, size_t errlen);
/* "2,4,6" -> positive ints (malloc'd); zero, negative, non-integers, > INT_MAX
 * and empty items rejected. */
int bench_parse_int_list(const char *s, int **out, size_t *n, char *err, size_t errlen);
/* Human form: 1048576 -> "1M", 1536 -> "1.5K"; plain bytes when no unit shows the
 * size exactly with two decimals (1025 -> "1025"). bench_parse_size reads it back. */
void bench_format_size(uint64_t bytes, char *buf, size_t len);

#endif
