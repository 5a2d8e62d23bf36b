/* The runner's entry points: one configuration, or several interleaved by size. */
#include "engine/bench_run.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void bench_runner_init(bench_runner *r, const bench_options *opts, coll_comm *comm, int nnodes,
                       bench_sink *sink)
{
    memset(r, 0, sizeof *r);
    r->opts = opts;
    r->comm = comm;
    r->rank = coll_comm_rank(comm);
    r->nranks = coll_comm_size(comm);
    int hosts = coll_comm_host_count(comm); /* collective: host ids compared, not guessed */
    r->nnodes = hosts > 0 ? hosts : nnodes > 0 ? nnodes : 1;
    r->sink = r->rank == 0 ? sink : NULL;
    r->print = r->rank == 0 && !opts->quiet;
    r->progress = r->print && isatty(STDERR_FILENO);
    r->test_delay_ms = bench_run_test_delay_ms(r->rank);
    r->pass = 1;
}

int bench_runner_run(bench_runner *r, char *errmsg, size_t errlen)
{
    bench_run_state s;
    size_t nsizes;
    const uint64_t *sizes = bench_run_sizes(r->opts, &nsizes);
    int rc = bench_run_open(&s, r, errmsg, errlen);
    if (rc) return rc;
    bench_run_print_header(&s);
    rc = bench_run_alloc_pool(&s, sizes, nsizes);
    if (rc == 0) rc = r->opts->duration_s > 0 ? bench_run_soak(&s) : bench_run_pairs(&s);
    rc = bench_run_close(&s, rc);
    if (r->print && rc == 0) bench_table_print_footer(&s.table);
    return rc;
}

/* Rank 0's table of one pass goes to memory and is printed whole when the
 * pass ends: the backends' tables would otherwise interleave line by line.
 * Without memory for it, straight to stdout (rank 0 alone must not stop
 * while the others go on). */
static void table_begin(bench_run_state *s)
{
    if (!s->r->print) return;
    FILE *mem = open_memstream(&s->table_text, &s->table_len);
    if (mem) s->table.out = mem;
    bench_run_print_header(s);
}

/* What was measured is printed even when the pass failed; the footer, which
 * sums it up, only when it ended. */
static void table_end(bench_run_state *s, int ended)
{
    if (!s->r->print) return;
    bench_run_progress_clear(s);
    if (ended) bench_table_print_footer(&s->table);
    if (s->table.out == stdout) return; /* printed as it went */
    fclose(s->table.out);
    s->table.out = stdout;
    if (s->table_text) fwrite(s->table_text, 1, s->table_len, stdout);
    fflush(stdout);
    free(s->table_text);
    s->table_text = NULL;
}

/* One pass: per pair and size, every runner in turn, in `order`. */
static int run_pass_interleaved(bench_run_state *ss, const size_t *order, size_t n, size_t *failed)
{
    const bench_options *o = ss[0].r->opts;
    size_t nsizes;
    const uint64_t *sizes = bench_run_sizes(o, &nsizes);
    for (size_t p = 0; p < o->npairs; p++)
        for (size_t i = 0; i < nsizes; i++)
            for (size_t k = 0; k < n; k++) {
                bench_run_state *s = &ss[order[k]];
                if (s->refused[p]) continue;
                if (s->r->turn) s->r->turn(s->r->turn_arg);
                int rc = bench_run_size(s, &o->pairs[p], sizes[i]);
                if (rc == 0) continue;
                if ((rc = bench_run_skip_refused(s, &o->pairs[p], sizes[i], i == 0, rc))) {
                    *failed = order[k];
                    return rc;
                }
                s->refused[p] = 1; /* the pair's larger sizes would be refused too */
            }
    return 0;
}

int bench_runner_run_passes(bench_runner *rs, size_t n, int passes, size_t *failed, char *errmsg,
                            size_t errlen)
{
    bench_run_state *ss = calloc(n, sizeof *ss);
    size_t *order = calloc(n, sizeof *order);
    size_t opened = 0;
    int rc = ss && order ? 0 : COLL_ENOMEM;
    *failed = 0;
    for (; rc == 0 && opened < n; opened++) {
        rc = bench_run_open(&ss[opened], &rs[opened], errmsg, errlen);
        ss[opened].refused = calloc(rs[opened].opts->npairs, 1);
        if (rc == 0 && !ss[opened].refused) rc = COLL_ENOMEM;
        if (rc) *failed = opened;
    }
    if (rc == 0) rc = bench_run_share_pool(ss, n);
    for (int pass = 0; rc == 0 && pass < passes; pass++) {
        if (rs[0].print && passes > 1) {
            printf("\n# pass %d of %d%s\n", pass + 1, passes,
                   pass % 2 ? ", backends in reverse order" : "");
            fflush(stdout);
        }
        for (size_t k = 0; k < n; k++) order[k] = pass % 2 ? n - 1 - k : k;
        for (size_t k = 0; k < n; k++) rs[k].pass = pass + 1;
        for (size_t k = 0; k < n; k++) table_begin(&ss[order[k]]);
        rc = run_pass_interleaved(ss, order, n, failed);
        for (size_t k = 0; k < n; k++) table_end(&ss[order[k]], rc == 0);
    }
    /* the pool's owner closes last: the others only borrowed it */
    for (size_t i = opened; i-- > 0;) {
        int crc = bench_run_close(&ss[i], 0);
        if (rc == 0 && crc) rc = crc, *failed = i;
    }
    free(ss);
    free(order);
    return rc;
}
