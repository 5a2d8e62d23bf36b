/* The summary of a set of traces (trace_summary.h). Bytes are the larger of a
 * call's input and output on the rank: what it moves through its buffers. */
#include <stdint.h>
#include <string.h>

#include "replay/trace_summary.h"

typedef struct op_sum {
    size_t calls;
    double bytes, ns;
} op_sum;

static void human(double b, char *out, size_t len)
{
    const char *unit[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    int u = 0;
    while (b >= 1024 && u < 4) b /= 1024, u++;
    snprintf(out, len, u ? "%.1f %s" : "%.0f %s", b, unit[u]);
}

static void ranks_text(const replay_group *g, char *out, size_t len)
{
    size_t k = 0;
    for (int i = 0; i < g->nranks && k + 16 < len; i++) {
        if (i == 12 && g->nranks > 14) {
            k += (size_t)snprintf(out + k, len - k, ",...,%d", g->ranks[g->nranks - 1]);
            break;
        }
        k += (size_t)snprintf(out + k, len - k, "%s%d", i ? "," : "", g->ranks[i]);
    }
}

/* One group of t (the lowest member's trace), its ops. */
static void group_lines(FILE *f, const replay_trace *t, size_t gi, double *total_bytes)
{
    const replay_group *g = &t->groups[gi];
    op_sum s[REPLAY_OP_COUNT];
    memset(s, 0, sizeof s);
    for (size_t i = 0; i < t->ncalls; i++) {
        const replay_call *c = &t->calls[i];
        if (c->group != gi) continue;
        uint64_t elems = c->in > c->out ? c->in : c->out;
        s[c->op].calls++;
        s[c->op].bytes += (double)elems * (double)coll_dtype_size(c->dtype);
        if (c->t0 >= 0 && c->t1 >= c->t0) s[c->op].ns += (double)(c->t1 - c->t0);
    }
    char ranks[160];
    ranks_text(g, ranks, sizeof ranks);
    fprintf(f, "group \"%s\": ranks %s%s%s (as rank %d makes its calls)\n", g->id, ranks,
            *g->desc ? "; " : "", g->desc, t->rank);
    if (g->plan) fprintf(f, "  plan (what its probes decided): %s\n", g->plan);
    fprintf(f, "  %-14s %7s %12s %14s\n", "op", "calls", "bytes", "recorded ms");
    for (int op = 0; op < REPLAY_OP_COUNT; op++) {
        if (!s[op].calls) continue;
        char b[32], ms[32] = "-";
        human(s[op].bytes, b, sizeof b);
        if (t->has_times) snprintf(ms, sizeof ms, "%.3f", s[op].ns / 1e6);
        fprintf(f, "  %-14s %7zu %12s %14s\n", replay_op_name((replay_op)op), s[op].calls, b, ms);
        *total_bytes += s[op].bytes;
    }
}

/* Where the program ran: its backend and host, and the CPUs each rank could
 * run on (collbench replay --bind recorded pins a rank only where it was 1). */
static void where(FILE *f, replay_trace *const *by_rank, int world)
{
    const replay_trace *t0 = by_rank[0];
    int same = 1;
    for (int r = 1; r < world; r++) same &= by_rank[r]->cpus == t0->cpus;
    fprintf(f, "recorded on backend %s, host %s; CPUs a rank could run on: ",
            *t0->backend ? t0->backend : "(not said)", *t0->host ? t0->host : "(not said)");
    if (same && t0->cpus > 0) fprintf(f, "%d\n", t0->cpus);
    else if (same) fprintf(f, "not said\n");
    else
        for (int r = 0; r < world; r++)
            fprintf(f, "%s%d%s", r ? "," : "", by_rank[r]->cpus,
                    r + 1 < world ? "" : " (by rank)\n");
}

void replay_trace_summary(FILE *f, replay_trace *const *by_rank, int world)
{
    const replay_trace *t0 = by_rank[0];
    size_t calls = 0;
    for (int r = 0; r < world; r++) calls += by_rank[r]->ncalls;
    fprintf(f, "%d ranks, source %s, %zu calls in all (rank 0: %zu)\n", world,
            *t0->source ? t0->source : "?", calls, t0->ncalls);
    where(f, by_rank, world);
    /* each group once, from its lowest rank's trace */
    for (int r = 0; r < world; r++) {
        const replay_trace *t = by_rank[r];
        for (size_t gi = 0; gi < t->ngroups; gi++) {
            const replay_group *g = &t->groups[gi];
            int lowest = g->ranks[0];
            for (int i = 1; i < g->nranks; i++)
                if (g->ranks[i] < lowest) lowest = g->ranks[i];
            if (lowest != r) continue;
            double bytes = 0;
            group_lines(f, t, gi, &bytes);
        }
    }
}
