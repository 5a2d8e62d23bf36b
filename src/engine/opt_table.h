/* The one option parser of every collbench command: a table of flags (short
 * name, long name, value or not, handler, help line), one set of value parsers
 * (integers, numbers, sizes in range) whose messages name the flag and the bad
 * value, and the --help lines generated from the same table, so each flag is
 * written once. bench_options.c (the collectives) is the model.
 *
 * Accepted forms: "-n 5", "-n5", "--iters 5", "--iters=5"; flags without a
 * value take none ("--quiet=1" is an error). Parsing never exits: bad input
 * gives COLL_EINVAL with err "FLAG: why" (the command prefixes its name and
 * exits 2). */
#ifndef BENCH_OPT_TABLE_H
#define BENCH_OPT_TABLE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "engine/multinode_opts.h"

/* bench_opt_parse's return when -h/--help was given (the caller prints the usage). */
#define BENCH_OPT_HELP 1

typedef struct bench_opt_ctx bench_opt_ctx;

typedef struct bench_opt {
    char shortname;       /* 0: long only */
    const char *longname; /* without "--"; NULL: short only. Both unset: a heading,
                              * help printed as it is in the usage text */
    const char *metavar;  /* NULL: takes no value; "[=SIZE]": an optional value,
                              * given as --flag=SIZE only (the handler gets NULL without) */
    int (*fn)(bench_opt_ctx *c, const char *value); /* 0, BENCH_OPT_HELP or COLL_EINVAL */
    const char *help; /* NULL: accepted but not listed (an alias); '\n' continues it */
} bench_opt;

struct bench_opt_ctx {
    const bench_opt *table;
    size_t n;
    void *user;       /* the command's options, for the handlers */
    const char *flag; /* the flag being handled as messages name it: "-n" or "--iters" */
    char *err;
    size_t errlen;
    bench_multinode *mn; /* not NULL: the multi-host flags (multinode_opts.h) too */
    /* an argument that is not a flag; NULL: "unexpected argument" */
    int (*positional)(bench_opt_ctx *c, const char *arg);
};

#define BENCH_OPT_COUNT(t) (sizeof(t) / sizeof((t)[0]))

/* Parse argv[1..argc) through c's table, in order; stops at the first error
 * or help. 0, BENCH_OPT_HELP or COLL_EINVAL (err set). */
int bench_opt_parse(bench_opt_ctx *c, int argc, char **argv);

/* The table's lines of a --help text: "  " then "-X, --long META" (or
 * "    --long META") padded to width, then the help. */
void bench_opt_usage(FILE *f, const bench_opt *table, size_t n, int width);

/* The entry for "--long", "--long=V", "-X" or "-XV" (NULL: none). */
const bench_opt *bench_opt_find(const bench_opt *table, size_t n, const char *arg);

/* ---- for the handlers: each returns 0, or COLL_EINVAL with c->err "FLAG: why" ---- */

__attribute__((format(printf, 2, 3))) int bench_opt_fail(bench_opt_ctx *c, const char *fmt, ...);
/* The help flag's handler. */
int bench_opt_help(bench_opt_ctx *c, const char *value);
/* A decimal integer in [lo, hi]. */
int bench_opt_long(bench_opt_ctx *c, const char *v, long lo, long hi, long *out);
int bench_opt_int(bench_opt_ctx *c, const char *v, long lo, long hi, int *out);
/* A decimal (or 0x) integer, 0 or more. */
int bench_opt_u64(bench_opt_ctx *c, const char *v, uint64_t *out);
/* A finite number in [lo, hi]; lo excluded when lo_open, hi excluded when hi_open
 * (hi INFINITY: no upper limit). */
int bench_opt_double(bench_opt_ctx *c, const char *v, double lo, int lo_open, double hi,
                     int hi_open, double *out);
/* The largest -T of every command, in seconds (a day): -T bounds every wait a
 * rank can enter, so a larger one (a typo, 1e9) is refused, not waited out. */
#define BENCH_MAX_TIMEOUT_S 86400.0
/* A size of at least 1 byte ("4K", "1M": powers of 1024). */
int bench_opt_size(bench_opt_ctx *c, const char *v, uint64_t *out);
/* A list of process counts "2,4,6", each 1..max; *out (malloc'd, freed first) and *n. */
int bench_opt_procs(bench_opt_ctx *c, const char *v, int max, int **out, size_t *n);
/* v copied into dst (len bytes), or "too long". */
int bench_opt_text(bench_opt_ctx *c, const char *v, char *dst, size_t len);
/* The one rule of every list (a flag whose metavar is "LIST", bench_opt_parse
 * checks it before the handler; --predict's keys): no empty item and no item
 * given twice, the same text or the same size or count written two ways ("1K"
 * and "1024"); keyed ("hosts=64,link=..."): no key given twice. A sweep run
 * twice would write duplicate rows, and a value given twice is a slip whose
 * other half would be dropped. Lists that are sequences (layer widths) use
 * another metavar. 0, or COLL_EINVAL with err naming the item and the list. */
#define BENCH_LIST_MAX_ITEMS 4096
int bench_list_check(const char *list, int keyed, char *err, size_t errlen);
/* A file name that is not empty (points into argv). */
int bench_opt_file(bench_opt_ctx *c, const char *v, const char **out);

#endif
