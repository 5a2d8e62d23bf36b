/* The trace part of collbench model (docs/DESIGN.md "Cost model", "A trace as
 * the workload"): every rank's recorded calls predicted on each cluster. */
#include "cmd_model_trace.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "coll.h"
#include "costmodel/model_range.h"
#include "costmodel/model_xval.h"
#include "engine/bench_coll.h"
#include "exit_codes.h"
#include "replay/trace.h"
#include "cli_trace_set.h"

#define PREFIX "collbench model: --trace"

/* The engine's collective for a call of the trace (send and receive: one message). */
static const char *collective_of(replay_op op)
{
    return op == REPLAY_SEND || op == REPLAY_RECV ? "sendrecv" : replay_op_name(op);
}

/* Whether two ranks made the same calls (names are static: pointers compare). */
static int same_calls(const cmd_model_rank *a, const cmd_model_rank *b)
{
    if (a->ncalls != b->ncalls) return 0;
    for (size_t i = 0; i < a->ncalls; i++) {
        const model_call *x = &a->calls[i], *y = &b->calls[i];
        if (x->collective != y->collective || x->dtype != y->dtype || x->count != y->count ||
            x->ranks != y->ranks)
            return 0;
    }
    return 1;
}

/* Each rank's first rank with the same calls, comparing only where a hash of
 * the calls agrees (a big world's ranks are mostly alike). */
static int mark_alike(cmd_model_trace *t)
{
    uint64_t *h = calloc(t->nranks + 1, sizeof *h);
    if (!h) return -1;
    t->distinct = 0;
    for (size_t k = 0; k < t->nranks; k++) {
        cmd_model_rank *r = &t->ranks[k];
        h[k] = 1469598103934665603ull; /* FNV-1a over the calls' fields */
        for (size_t i = 0; i < r->ncalls; i++) {
            const model_call *c = &r->calls[i];
            uint64_t f[4] = {(uint64_t)(uintptr_t)c->collective, (uint64_t)(uintptr_t)c->dtype,
                             c->count, (uint64_t)c->ranks};
            for (int j = 0; j < 4; j++) h[k] = (h[k] ^ f[j]) * 1099511628211ull;
        }
        r->same_as = k;
        for (size_t j = 0; j < k && r->same_as == k; j++)
            if (t->ranks[j].same_as == j && h[j] == h[k] && same_calls(&t->ranks[j], r))
                r->same_as = j;
        t->distinct += r->same_as == k;
    }
    free(h);
    return 0;
}

int cmd_model_trace_load(const char *arg, cmd_model_trace *t)
{
    struct stat st;
    memset(t, 0, sizeof *t);
    if (stat(arg, &st) != 0)
        return fprintf(stderr, PREFIX " %s: %s\n", arg, strerror(errno)), EXIT_USAGE;
    snprintf(t->path, sizeof t->path, "%s", arg);
    cli_trace_set ts;
    /* a directory: every rank's file, checked against each other; a file: that rank */
    int code = cli_trace_set_load(PREFIX, &arg, 1, S_ISDIR(st.st_mode), &ts);
    size_t n = code ? 0 : ts.by_rank ? (size_t)ts.world : ts.n;
    if (!code && !(t->ranks = calloc(n, sizeof *t->ranks))) code = EXIT_RUNTIME;
    size_t calls = 0;
    for (size_t k = 0; !code && k < n; k++) {
        const replay_trace *tr = ts.by_rank ? ts.by_rank[k] : &ts.traces[k];
        cmd_model_rank *mr = &t->ranks[t->nranks++];
        mr->rank = tr->rank;
        if (!(mr->calls = calloc(tr->ncalls + 1, sizeof *mr->calls))) code = EXIT_RUNTIME;
        for (size_t i = 0; !code && i < tr->ncalls; i++) {
            const replay_call *c = &tr->calls[i];
            /* names are static (replay_op_name, coll_dtype_name): they outlive tr */
            mr->calls[mr->ncalls++] = (model_call){.collective = collective_of(c->op),
                                                   .dtype = coll_dtype_name(c->dtype),
                                                   .dtype_size = coll_dtype_size(c->dtype),
                                                   .count = c->count,
                                                   .ranks = tr->groups[c->group].nranks};
        }
        calls += tr->ncalls;
    }
    if (!code) t->world = ts.world;
    if (!code && mark_alike(t)) code = EXIT_RUNTIME;
    if (code == EXIT_RUNTIME) fprintf(stderr, "collbench model: out of memory\n");
    if (!code && calls == 0)
        code = EXIT_USAGE, fprintf(stderr, PREFIX " %s: no calls to predict\n", arg);
    cli_trace_set_free(&ts);
    return code;
}

void cmd_model_trace_free(cmd_model_trace *t)
{
    for (size_t k = 0; k < t->nranks; k++) free(t->ranks[k].calls);
    free(t->ranks);
    memset(t, 0, sizeof *t);
}

static void print_assumptions(const cmd_model_trace *t)
{
    size_t calls = 0;
    for (size_t k = 0; k < t->nranks; k++) calls += t->ranks[k].ncalls;
    if (t->nranks == 1)
        printf("\n== the trace as the workload (predictions, not measured): %s, rank %d's %zu "
               "calls of a %d-rank world\n",
               t->path, t->ranks[0].rank, calls, t->world);
    else
        printf("\n== the trace as the workload (predictions, not measured): %s, %zu calls of %zu "
               "ranks, %zu distinct (ranks with the same calls are predicted once)\n",
               t->path, calls, t->nranks, t->distinct);
    printf("   counts: each rank's calls one after another, as it made them; the rank whose "
           "calls add up to the most\n"
           "   is shown (ranks that wait for each other finish with it), the range over the "
           "ranks beside it;\n"
           "   only models that validated (held-out error at most 25%%, as the report draws "
           "them) predict; a call\n"
           "   of a dtype without rows takes its collective's rows of another dtype (bytes "
           "alike).\n"
           "   assumes, where the cluster's world is not the trace's: a group of the whole world "
           "runs on the whole\n"
           "   cluster with data-parallel sizes (gradients keep their sizes): all-reduce, "
           "broadcast and reduce counts\n"
           "   unchanged; all-gather and reduce-scatter per-rank counts unchanged (their whole "
           "vector grows with the\n"
           "   ranks); all-to-all per-peer counts unchanged; a smaller group keeps its ranks, on "
           "as few hosts as hold it.\n");
}

/* rank: the rank shown; lo and hi: the ranks' least and most predicted (ms). */
static void print_stack(const model_workload *w, const model_series *s0, const model_cluster *c,
                        const char *spec, int rank, size_t nranks, double lo, double hi)
{
    char bytes[32];
    printf("\n%s / %s / %s buffers on %d hosts x %d ranks (%s): the trace's communication\n",
           s0->host, s0->backend, s0->buffers, c->hosts, c->per_host, spec);
    if (nranks > 1)
        printf("    rank %d, the most of the %zu ranks (the ranks: %.3f-%.3f ms)\n", rank, nranks,
               lo, hi);
    printf("    %-14s %6s %14s %14s\n", "collective", "calls", "bytes", "predicted_ms");
    for (size_t i = 0; i < w->n; i++) {
        const model_workload_coll *k = &w->c[i];
        snprintf(bytes, sizeof bytes, "%.0f", k->bytes);
        if (k->left_out == k->calls)
            printf("    %-14s %6zu %14s %14s\n", k->collective, k->calls, bytes, "-");
        else
            printf("    %-14s %6zu %14s %14.3f%s\n", k->collective, k->calls, bytes,
                   k->time_us / 1e3, k->left_out ? " (some calls left out)" : "");
    }
    snprintf(bytes, sizeof bytes, "%.0f", w->bytes);
    printf("    %-14s %6zu %14s %14.3f\n", "total", w->calls, bytes, w->time_us / 1e3);
    if (w->left_out == 0) {
        printf("    every call predicted\n");
        return;
    }
    printf("    left out (not in the total): %zu of %zu calls, %.1f%% of the bytes:", w->left_out,
           w->calls, w->bytes > 0 ? 100 * w->left_out_bytes / w->bytes : 0.0);
    for (size_t i = 0, said = 0; i < w->n; i++)
        if (w->c[i].left_out)
            printf("%s %s %zu (%s)", said++ ? ";" : "", w->c[i].collective, w->c[i].left_out,
                   w->c[i].why);
    printf("\n");
}

static int same_stack(const model_series *a, const model_series *b)
{
    return !strcmp(a->host, b->host) && !strcmp(a->backend, b->backend) &&
           !strcmp(a->buffers, b->buffers);
}

/* The validated series of s0's stack that the trace's calls use, where the
 * cluster or the calls' sizes lie beyond their rows ("Extrapolation"). */
static void print_beyond(const model_fits *f, const model_series *s0, const model_cluster *c,
                         const cmd_model_trace *t)
{
    int said = 0;
    for (size_t i = 0; i < f->n; i++) {
        const model_series *s = &f->s[i];
        if (!s->ok || !same_stack(s, s0) || !model_xval_trusted(s)) continue;
        double lo = INFINITY, hi = 0;
        const bench_coll *bc = bench_coll_find(s->collective);
        for (size_t r = 0; r < t->nranks; r++)
            for (size_t k = 0; t->ranks[r].same_as == r && k < t->ranks[r].ncalls; k++) {
                const model_call *m = &t->ranks[r].calls[k];
                if (strcmp(m->collective, s->collective)) continue;
                double b = bc ? (double)bench_coll_bytes(bc, m->count, m->dtype_size,
                                                         c->hosts * c->per_host)
                              : (double)m->count * (double)m->dtype_size;
                lo = fmin(lo, b), hi = fmax(hi, b);
            }
        char beyond[512];
        if (hi == 0 || !model_beyond(s, c, lo, hi, beyond, sizeof beyond)) continue;
        printf("%s %s %s: %s",
               said++ ? ";"
                      : "    extrapolated beyond the rows (expect errors "
                        "larger than the fit's residuals):",
               s->collective, s->algo, beyond);
    }
    if (said) printf("\n");
}

int cmd_model_trace_print(const model_fits *f, const model_cluster *clusters,
                          const char *const *specs, size_t nclusters, const cmd_model_trace *t)
{
    print_assumptions(t);
    int any = 0;
    for (size_t k = 0; k < nclusters; k++)
        for (size_t i = 0; i < f->n; i++) {
            const model_series *s = &f->s[i];
            int seen = !s->ok;
            for (size_t j = 0; j < i && !seen; j++) seen = f->s[j].ok && same_stack(&f->s[j], s);
            if (seen) continue;
            /* every rank's calls; the one that adds up to the most is shown */
            model_workload w, most = {0};
            double lo = INFINITY, hi = -1;
            int rank = 0;
            for (size_t r = 0; r < t->nranks; r++) {
                /* a rank alike an earlier one comes to its time: the first is shown */
                if (t->ranks[r].same_as != r) continue;
                model_workload_predict(f, s->host, s->backend, s->buffers, &clusters[k], t->world,
                                       t->ranks[r].calls, t->ranks[r].ncalls, &w);
                lo = fmin(lo, w.time_us / 1e3);
                if (w.time_us / 1e3 > hi) hi = w.time_us / 1e3, most = w, rank = t->ranks[r].rank;
            }
            w = most;
            print_stack(&w, s, &clusters[k], specs[k], rank, t->nranks, lo, hi);
            print_beyond(f, s, &clusters[k], t);
            any |= w.left_out < w.calls;
        }
    if (!any)
        fprintf(stderr, "collbench model: --trace: no call of the trace could be predicted "
                        "(no validated model of its collectives: see above)\n");
    return !any;
}
