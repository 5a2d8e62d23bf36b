/* A turn's summary over the ranks, its table and its rows (replay_report.h). */
#include "replay/replay_report.h"

#include <math.h>
#include <string.h>

void replay_summarize(const replay_measure *all, int world, replay_summary *s)
{
    memset(s, 0, sizeof *s);
    replay_medians_clear(&s->med);
    s->world = world;
    s->has_times = world > 0;
    for (int r = 0; r < world; r++) {
        const replay_measure *m = &all[r];
        if (m->total_s > s->total_s) s->total_s = m->total_s;
        s->comm_s += m->comm_s / world;
        s->gap_s += m->gap_s / world;
        s->exposed_s += (m->total_s - m->gap_s) / world;
        s->capped_gaps += m->capped_gaps;
        if (!m->has_times) s->has_times = 0;
        s->recorded_comm_s += m->recorded_comm_s / world;
        s->skew_s += m->skew_s / world;
        s->recorded_skew_s += m->recorded_skew_s / world;
        if (m->recorded_total_s > s->recorded_total_s) s->recorded_total_s = m->recorded_total_s;
        for (int op = 0; op < REPLAY_OP_COUNT; op++)
            for (int k = 0; k < REPLAY_NSIZE; k++) {
                replay_cell *d = &s->cell[op][k];
                const replay_cell *c = &m->cell[op][k];
                d->calls += c->calls;
                d->time_s += c->time_s;
                d->busbytes += c->busbytes;
                d->recorded_s += c->recorded_s;
            }
    }
}

static double busbw_GBps(double busbytes, double time_s)
{
    return time_s > 0 ? busbytes / time_s / 1e9 : 0;
}

/* One line of the table: a class, a collective overall ("all") or the trace. */
static void print_line(FILE *f, const replay_summary *s, const char *coll, const char *size,
                       const replay_cell *c, double med, double rec_med)
{
    fprintf(f, " %14s %8s %8.0f %11.3f", coll, size, c->calls, c->time_s / s->world * 1e3);
    if (s->has_times && c->recorded_s > 0)
        fprintf(f, " %13.3f %6.2f", c->recorded_s / s->world * 1e3, c->time_s / c->recorded_s);
    else fprintf(f, " %13s %6s", "-", "-");
    fprintf(f, " %12.3f", busbw_GBps(c->busbytes, c->time_s));
    if (isfinite(med)) fprintf(f, " %11.4f", med * 1e3);
    else fprintf(f, " %11s", "-");
    if (s->has_times && isfinite(rec_med) && rec_med > 0)
        fprintf(f, " %11.4f %6.2f\n", rec_med * 1e3, med / rec_med);
    else fprintf(f, " %11s %6s\n", "-", "-");
}

/* The cells of op added up (the collective overall). */
static replay_cell op_cell(const replay_summary *s, int op)
{
    replay_cell sum = {0};
    for (int k = 0; k < REPLAY_NSIZE; k++) {
        const replay_cell *c = &s->cell[op][k];
        sum.calls += c->calls, sum.time_s += c->time_s, sum.busbytes += c->busbytes;
        sum.recorded_s += c->recorded_s;
    }
    return sum;
}

void replay_print(FILE *f, const replay_turn *turn, const replay_summary *s)
{
    char lanes[64] = "";
    if (turn->lanes > 1)
        snprintf(lanes, sizeof lanes, " on %zu communicators per group", turn->lanes);
    fprintf(f,
            "# replay of %s on %s (pass %d of %d): %d ranks, buffers %s, gaps %s, overlap %s%s, "
            "plan %s, bind %s\n",
            turn->trace, turn->backend, turn->pass, turn->passes, s->world, turn->buffers,
            turn->gaps, turn->overlap, lanes, turn->plan ? turn->plan : "probed",
            turn->bind ? turn->bind : "");
    fprintf(f,
            "#   total %.3f ms   communication %.3f ms   gaps %.3f ms   exposed communication "
            "%.3f ms\n",
            s->total_s * 1e3, s->comm_s * 1e3, s->gap_s * 1e3, s->exposed_s * 1e3);
    int rec = s->has_times && s->recorded_comm_s > 0;
    if (rec)
        fprintf(f, "#   recorded: total %.3f ms   communication %.3f ms   replayed/recorded %.2f\n",
                s->recorded_total_s * 1e3, s->recorded_comm_s * 1e3,
                s->comm_s / s->recorded_comm_s);
    if (isfinite(s->skew_s)) {
        fprintf(f, "#   of the communication, before a call's last rank arrived: %.3f ms",
                s->skew_s * 1e3);
        if (rec && isfinite(s->recorded_skew_s))
            fprintf(f, " (recorded %.3f ms); after it: %.3f ms (recorded %.3f ms)",
                    s->recorded_skew_s * 1e3, (s->comm_s - s->skew_s) * 1e3,
                    (s->recorded_comm_s - s->recorded_skew_s) * 1e3);
        else fprintf(f, "; after it: %.3f ms", (s->comm_s - s->skew_s) * 1e3);
        fputc('\n', f);
    }
    if (s->capped_gaps > 0)
        fprintf(f, "#   %.0f gaps longer than half of -T cut to it\n", s->capped_gaps);
    fprintf(f, "# times: mean per rank; calls: all ranks; total: the slowest rank\n");
    fprintf(f, "# median: one call's time, replayed and recorded: each call position's (a "
               "rank's k-th call of the row) mean over the ranks, then the median over the "
               "calls\n");
    fprintf(f, "#%14s %8s %8s %11s %13s %6s %12s %11s %11s %6s\n", "collective", "size", "calls",
            "time(ms)", "recorded(ms)", "ratio", "busbw(GB/s)", "median(ms)", "rec.med(ms)",
            "ratio");
    replay_cell all = {0};
    for (int op = 0; op < REPLAY_OP_COUNT; op++) {
        replay_cell sum = op_cell(s, op);
        if (sum.calls == 0) continue;
        const char *name = replay_op_name((replay_op)op);
        for (int k = 0; k < REPLAY_NSIZE; k++)
            if (s->cell[op][k].calls > 0)
                print_line(f, s, name, replay_size_class_name(k), &s->cell[op][k],
                           s->med.replayed[op][k], s->med.recorded[op][k]);
        print_line(f, s, name, "all", &sum, s->med.replayed[op][REPLAY_MEDIAN_ALL],
                   s->med.recorded[op][REPLAY_MEDIAN_ALL]);
        all.calls += sum.calls, all.busbytes += sum.busbytes, all.time_s += sum.time_s;
    }
    /* the trace: its communication and recorded communication as summed */
    all.time_s = s->comm_s * s->world;
    all.recorded_s = s->recorded_comm_s * s->world;
    print_line(f, s, "all", "all", &all, s->med.all_replayed, s->med.all_recorded);
}

/* s as a JSON string (quotes, backslashes and control bytes escaped). */
static void json_str(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\') fprintf(f, "\\%c", c);
        else if (c < 0x20) fprintf(f, "\\u%04x", c);
        else fputc(c, f);
    }
    fputc('"', f);
}

static void json_num(FILE *f, const char *key, double v, int present)
{
    if (present && isfinite(v)) fprintf(f, ",\"%s\":%.9g", key, v);
    else fprintf(f, ",\"%s\":null", key);
}

static void row_start(FILE *f, const replay_turn *turn, const replay_summary *s, const char *coll,
                      const char *size, double calls)
{
    fputs("{\"trace\":", f);
    json_str(f, turn->trace);
    fputs(",\"backend\":", f);
    json_str(f, turn->backend);
    fprintf(f, ",\"pass\":%d,\"nprocs\":%d,\"buffers\":", turn->pass, s->world);
    json_str(f, turn->buffers);
    fputs(",\"gaps\":", f);
    json_str(f, turn->gaps);
    fprintf(f, ",\"collective\":\"%s\",\"size_class\":\"%s\",\"calls\":%.0f", coll, size, calls);
}

/* The per-call medians, the overlap, the binding and the skew (summary: the
 * turn's row; absent in the others), the last six columns. */
static void row_end(FILE *f, const replay_turn *turn, const replay_summary *s, int summary,
                    double med, double rec_med)
{
    json_num(f, "median_s", med, 1);
    json_num(f, "recorded_median_s", rec_med, s->has_times && rec_med > 0);
    fputs(",\"overlap\":", f);
    json_str(f, turn->overlap);
    fputs(",\"bind\":", f);
    json_str(f, turn->bind ? turn->bind : "");
    json_num(f, "skew_s", s->skew_s, summary);
    json_num(f, "recorded_skew_s", s->recorded_skew_s,
             summary && s->has_times && s->recorded_comm_s > 0);
    fputs("}\n", f);
}

/* A class's or a collective's row: c summed over the ranks. */
static void cell_row(FILE *f, const replay_turn *turn, const replay_summary *s, const char *coll,
                     const char *size, const replay_cell *c, double med, double rec_med)
{
    int crec = s->has_times && c->recorded_s > 0;
    row_start(f, turn, s, coll, size, c->calls);
    json_num(f, "time_s", c->time_s / s->world, 1);
    json_num(f, "recorded_s", c->recorded_s / s->world, crec);
    json_num(f, "ratio", crec ? c->time_s / c->recorded_s : 0, crec);
    json_num(f, "busbw_GBps", busbw_GBps(c->busbytes, c->time_s), 1);
    json_num(f, "total_s", 0, 0);
    json_num(f, "comm_s", 0, 0);
    json_num(f, "gap_s", 0, 0);
    json_num(f, "exposed_s", 0, 0);
    row_end(f, turn, s, 0, med, rec_med);
}

void replay_rows_jsonl(FILE *f, const replay_turn *turn, const replay_summary *s)
{
    double calls = 0, busbytes = 0, time = 0;
    for (int op = 0; op < REPLAY_OP_COUNT; op++)
        for (int k = 0; k < REPLAY_NSIZE; k++)
            calls += s->cell[op][k].calls, busbytes += s->cell[op][k].busbytes,
                time += s->cell[op][k].time_s;
    int rec = s->has_times && s->recorded_comm_s > 0;
    row_start(f, turn, s, "all", "all", calls);
    json_num(f, "time_s", s->comm_s, 1);
    json_num(f, "recorded_s", s->recorded_comm_s, rec);
    json_num(f, "ratio", rec ? s->comm_s / s->recorded_comm_s : 0, rec);
    json_num(f, "busbw_GBps", busbw_GBps(busbytes, time), 1);
    json_num(f, "total_s", s->total_s, 1);
    json_num(f, "comm_s", s->comm_s, 1);
    json_num(f, "gap_s", s->gap_s, 1);
    json_num(f, "exposed_s", s->exposed_s, 1);
    row_end(f, turn, s, 1, s->med.all_replayed, s->med.all_recorded);
    for (int op = 0; op < REPLAY_OP_COUNT; op++) {
        replay_cell sum = op_cell(s, op);
        if (sum.calls == 0) continue;
        const char *name = replay_op_name((replay_op)op);
        for (int k = 0; k < REPLAY_NSIZE; k++)
            if (s->cell[op][k].calls > 0)
                cell_row(f, turn, s, name, replay_size_class_name(k), &s->cell[op][k],
                         s->med.replayed[op][k], s->med.recorded[op][k]);
        cell_row(f, turn, s, name, "all", &sum, s->med.replayed[op][REPLAY_MEDIAN_ALL],
                 s->med.recorded[op][REPLAY_MEDIAN_ALL]);
    }
}
