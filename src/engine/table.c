/* nccl-tests' output format, so people who read those tables read ours at a
 * glance, and scripts written for nccl-tests logs keep working: same columns,
 * same widths, same footer lines. */
#include "engine/table.h"

#include <inttypes.h>
#include <string.h>

/* Width of the size..root block: "%12s  %12s  %8s  %6s  %6s". */
#define LEAD_WIDTH 52
/* Per placement: "  %7s  %6s  %6s  %6s", plus 4 x "  %7s" when verbose. */
#define CELL_WIDTH 32
#define VERBOSE_EXTRA 36

void bench_table_init(bench_table *t, FILE *out, int verbose)
{
    memset(t, 0, sizeof *t);
    t->out = out ? out : stdout;
    t->verbose = verbose;
}

/* nccl-tests' time format: fewer decimals as the number grows, width 7. */
static void format_time(double us, char *buf, size_t len)
{
    if (us >= 10000.0) snprintf(buf, len, "%7.0f", us);
    else if (us >= 100.0) snprintf(buf, len, "%7.1f", us);
    else snprintf(buf, len, "%7.2f", us);
}

/* label centred over a group of columns starting at column `start`. */
static void put_label(char *line, size_t cap, size_t start, size_t width, const char *label)
{
    size_t n = strlen(label);
    size_t at = start + (width > n ? (width - n) / 2 : 0);
    if (at + n < cap) memcpy(line + at, label, n);
}

void bench_table_print_header(bench_table *t, const bench_row *cfg)
{
    FILE *f = t->out;
    t->busbw_sum = 0;
    t->busbw_cells = 0;
    t->wrong_total = 0;
    t->rows = 0;

    fprintf(f, "#  collective %s, backend %s, algo %s, %d ranks, %s %s\n", cfg->collective,
            cfg->backend, cfg->algo, cfg->nprocs, cfg->dtype, cfg->op);
    fprintf(f, "#  nodes %d, device %s, buffers %s, warmup iters %d, iters %d%s%s\n", cfg->nnodes,
            cfg->device, cfg->buffers, cfg->warmup, cfg->iters, cfg->host[0] ? ", host " : "",
            cfg->host);
    fprintf(f, "#\n");

    if (!t->verbose) {
        fprintf(
            f,
            "# %10s  %12s  %8s  %6s  %6s           out-of-place                       in-place\n",
            "", "", "", "", "");
    } else {
        char line[LEAD_WIDTH + 2 * (CELL_WIDTH + VERBOSE_EXTRA) + 2];
        size_t w = CELL_WIDTH + VERBOSE_EXTRA;
        memset(line, ' ', sizeof line);
        line[0] = '#';
        put_label(line, sizeof line, LEAD_WIDTH, w, "out-of-place");
        put_label(line, sizeof line, LEAD_WIDTH + w, w, "in-place");
        size_t end = sizeof line - 1;
        while (end > 1 && line[end - 1] == ' ') end--;
        line[end] = '\0';
        fprintf(f, "%s\n", line);
    }

    const char *extra_names = t->verbose ? "      min      p50      p99      max" : "";
    const char *extra_units = t->verbose ? "     (us)     (us)     (us)     (us)" : "";
    fprintf(f, "# %10s  %12s  %8s  %6s  %6s", "size", "count", "type", "redop", "root");
    for (int p = 0; p < 2; p++)
        fprintf(f, "  %7s  %6s  %6s %6s%s", "time", "algbw", "busbw", "#wrong", extra_names);
    fprintf(f, "\n# %10s  %12s  %8s  %6s  %6s", "(B)", "(elements)", "", "", "");
    for (int p = 0; p < 2; p++)
        fprintf(f, "  %7s  %6s  %6s %6s%s", "(us)", "(GB/s)", "(GB/s)", "", extra_units);
    fprintf(f, "\n");
    fflush(f);
}

/* One placement's cells; "-" everywhere when it was not run. */
static void print_cells(bench_table *t, const bench_row *r)
{
    FILE *f = t->out;
    if (!r) {
        fprintf(f, "  %7s  %6s  %6s  %5s", "-", "-", "-", "-");
        if (t->verbose) fprintf(f, "  %7s  %7s  %7s  %7s", "-", "-", "-", "-");
        return;
    }
    char time[32], wrong[32];
    format_time(r->time_us_avg, time, sizeof time);
    if (r->wrong < 0) snprintf(wrong, sizeof wrong, "N/A");
    else snprintf(wrong, sizeof wrong, "%" PRId64, r->wrong);
    fprintf(f, "  %7s  %6.2f  %6.2f  %5s", time, r->algbw_GBps, r->busbw_GBps, wrong);
    if (t->verbose) {
        const double v[4] = {r->time_us_min, r->time_us_p50, r->time_us_p99, r->time_us_max};
        for (int i = 0; i < 4; i++) {
            format_time(v[i], time, sizeof time);
            fprintf(f, "  %7s", time);
        }
    }
    t->busbw_sum += r->busbw_GBps;
    t->busbw_cells++;
    if (r->wrong > 0) t->wrong_total += r->wrong;
}

void bench_table_print_row(bench_table *t, const bench_row *oop, const bench_row *ip, int root)
{
    const bench_row *any = oop ? oop : ip;
    if (!any) return;
    FILE *f = t->out;
    fprintf(f, "%12" PRIu64 "  %12" PRIu64 "  %8s  %6s  %6d", any->bytes, any->count, any->dtype,
            any->op, root);
    print_cells(t, oop);
    print_cells(t, ip);
    fprintf(f, "\n");
    fflush(f); /* rows appear as sizes finish, even through a pipe */
    t->rows++;
}

void bench_table_print_note(bench_table *t, const char *text)
{
    fprintf(t->out, "# %s\n", text);
    fflush(t->out);
}

double bench_table_avg_busbw(const bench_table *t)
{
    return t->busbw_cells ? t->busbw_sum / (double)t->busbw_cells : 0.0;
}

void bench_table_print_footer(bench_table *t)
{
    FILE *f = t->out;
    fprintf(f, "# Out of bounds values : %" PRId64 " %s\n", t->wrong_total,
            t->wrong_total ? "FAILED" : "OK");
    fprintf(f, "# Avg bus bandwidth    : %g\n", bench_table_avg_busbw(t));
    fprintf(f, "#\n");
    fflush(f);
}
