/* The progress line of a run on stderr; see bench_run.h. The run's other
 * steps (rows, close) clear it before they print, so it sits below them. */
#include "engine/bench_run.h"

#include <stdarg.h>
#include <stdio.h>

#include "core/clock.h"

#define PROGRESS_PERIOD_S 0.2

void bench_run_progress(bench_run_state *s, const char *fmt, ...)
{
    if (!s->r->progress) return;
    double now = coll__now_s();
    if (now - s->last_progress < PROGRESS_PERIOD_S) return;
    s->last_progress = now;
    char line[160];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    fprintf(stderr, "\r\033[K%s %s", s->what, line);
    fflush(stderr);
    s->progress_shown = 1;
}

void bench_run_progress_clear(bench_run_state *s)
{
    if (!s->progress_shown) return;
    fprintf(stderr, "\r\033[K");
    fflush(stderr);
    s->progress_shown = 0;
    s->last_progress = 0;
}
