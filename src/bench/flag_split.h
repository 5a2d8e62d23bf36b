/* The flag/value split of the commands with their own small option parsers
 * (init, train): "--flag=value", "-Xvalue" and "--flag value" all give
 * flag and value. The collectives' parser (bench_options.c) has its own table. */
#ifndef BENCH_FLAG_SPLIT_H
#define BENCH_FLAG_SPLIT_H

#include <stddef.h>

/* Splits argv[*i] (which starts with '-'); consumes argv[*i + 1] as the value
 * when needed. Returns 0, or -1 when the value is missing (err says so). */
int bench_flag_split(int argc, char **argv, int *i, char *flag, size_t flaglen,
                     const char **value, char *err, size_t errlen);

#endif
