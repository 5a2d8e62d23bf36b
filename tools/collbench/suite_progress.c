/* The suite's progress on stderr: on a terminal one line redrawn in place
 * ("[3/11] allreduce tcp 4 ranks  elapsed 0:42  ETA 2:10"), elsewhere (a log, a
 * pipe, a test) one plain line per finished step. The ETA is learned from the
 * steps already run (bench/eta.h). */
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
    size_t current = p->index > 0 ? p->index - 1 : 0;
    return bench_eta_left(p->eta, p->total, current, now - p->step_t0);
}

void suite_progress_init(suite_progress *p, size_t total, eta_step *eta_steps)
{
    *p = (suite_progress){.tty = isatty(STDERR_FILENO),
                          .total = total,
                          .t0 = coll__now_s(),
                          .eta = eta_steps};
}

void suite_progress_begin(suite_progress *p, size_t index, const char *title)
{
    p->index = index;
    p->title = title;
    p->step_t0 = coll__now_s();
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
    double now = coll__now_s();
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
    eta_step *done = &p->eta[p->index - 1];
    done->done = 1;
    done->seconds = seconds;
    double now = coll__now_s();
    clock_text(now - p->t0, elapsed, sizeof elapsed);
    p->step_t0 = now;
    double e = bench_eta_left(p->eta, p->total, p->index, 0);
    if (e >= 0) clock_text(e, left, sizeof left);
    suite_progress_clear(p);
    fprintf(stderr, "[%zu/%zu] %s: %s (%.1f s; elapsed %s, ETA %s)\n", p->index, p->total, p->title,
            outcome, seconds, elapsed, p->index == p->total ? "0:00" : left);
    fflush(stderr);
}
