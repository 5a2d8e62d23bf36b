/* The suite's progress on stderr: on a terminal one line redrawn in place
 * ("[3/11] allreduce tcp 4 ranks  elapsed 0:42  ETA 2:10"), elsewhere (a log, a
 * pipe, a test) one plain line per finished step. The ETA scales the time spent
 * so far by the weight (expected cost) of the steps left. */
#include "suite.h"

#include <unistd.h>

#include "core/clock.h"

#define REDRAW_PERIOD_S 0.5

static void clock_text(double s, char *buf, size_t len)
{
    long t = s > 0 ? (long)(s + 0.5) : 0;
    if (t >= 3600) snprintf(buf, len, "%ld:%02ld:%02ld", t / 3600, t / 60 % 60, t % 60);
    else snprintf(buf, len, "%ld:%02ld", t / 60, t % 60);
}

/* Seconds left, or -1 before anything finished to judge by. */
static double eta(const suite_progress *p, double now)
{
    if (p->weight_done <= 0 || p->sweep_seconds <= 0) return -1;
    double rate = p->sweep_seconds / p->weight_done;
    double left = rate * (p->weight_total - p->weight_done) - (now - p->step_t0);
    double min_left = rate * (p->weight_total - p->weight_done - p->weight_step);
    return left > min_left ? left : min_left > 0 ? min_left : 0;
}

void suite_progress_init(suite_progress *p, size_t total, double weight_total)
{
    *p = (suite_progress){.tty = isatty(STDERR_FILENO), .total = total,
                          .t0 = coll_now_s(), .weight_total = weight_total};
}

void suite_progress_begin(suite_progress *p, size_t index, const char *title, double weight)
{
    p->index = index;
    p->title = title;
    p->weight_step = weight;
    p->step_t0 = coll_now_s();
    p->shown = 0;
    suite_progress_tick(p);
}

void suite_progress_clear(suite_progress *p)
{
    if (!p->shown) return;
    fprintf(stderr, "\r\033[K");
    fflush(stderr);
    p->shown = 0;
}

void suite_progress_tick(suite_progress *p)
{
    double now = coll_now_s();
    char elapsed[32], left[32] = "--:--";
    if (!p->tty || (p->shown && now - p->last_draw < REDRAW_PERIOD_S)) return;
    p->last_draw = now;
    clock_text(now - p->t0, elapsed, sizeof elapsed);
    double e = eta(p, now);
    if (e >= 0) clock_text(e, left, sizeof left);
    fprintf(stderr, "\r\033[K[%zu/%zu] %s  elapsed %s  ETA %s", p->index, p->total, p->title,
            elapsed, left);
    fflush(stderr);
    p->shown = 1;
}

void suite_progress_print(suite_progress *p, const char *line)
{
    suite_progress_clear(p);
    fprintf(stderr, "%s\n", line);
    fflush(stderr);
    suite_progress_tick(p);
}

void suite_progress_end(suite_progress *p, const char *outcome, double seconds)
{
    char elapsed[32], left[32] = "--:--";
    p->weight_done += p->weight_step;
    p->sweep_seconds += seconds;
    double now = coll_now_s();
    clock_text(now - p->t0, elapsed, sizeof elapsed);
    p->step_t0 = now;
    p->weight_step = 0;
    double e = eta(p, now);
    if (e >= 0) clock_text(e, left, sizeof left);
    suite_progress_clear(p);
    fprintf(stderr, "[%zu/%zu] %s: %s (%.1f s; elapsed %s, ETA %s)\n", p->index, p->total,
            p->title, outcome, seconds, elapsed, p->index == p->total ? "0:00" : left);
    fflush(stderr);
}
