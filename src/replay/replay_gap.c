/* The program's own work between two calls, spent again. Where the trace
 * has the calling thread's CPU time (`cpu`, `wait_cpu`: the torch backend's
 * recording), that much CPU is spun, while the calls issued before run: a CPU
 * program's compute held its core, and its calls' progress threads got what
 * it left. The rest of the gap, and a gap without CPU time, is slept when
 * long, spun when short: six ranks on two cores must not starve each other,
 * so a long gap gives the CPU away; a short one would overshoot as a sleep
 * (the wake-up costs about 50-100 us here). */
#include <string.h>
#include <time.h>

#include "core/clock.h"
#include "replay/replay_run.h"

#define NGAPS 4
static const char *const gaps_names[] = {"none", "recorded", "busy", "sleep"};

const char *replay_gaps_name(replay_gaps g)
{
    return (unsigned)g < NGAPS ? gaps_names[g] : "invalid-gaps";
}

int replay_gaps_parse(const char *name, replay_gaps *g)
{
    for (int i = 0; i < NGAPS; i++)
        if (!strcmp(name, gaps_names[i])) return *g = (replay_gaps)i, 0;
    return -1;
}

double replay_spend_gap(double s, int busy)
{
    double start = coll__now_s();
    if (!(s > 0)) return 0;
    if (!busy && s >= REPLAY_SLEEP_GAP_S) {
        coll__sleep_s(s);
    } else {
        while (coll__now_s() - start < s) {
        }
    }
    return coll__now_s() - start;
}

double replay_thread_cpu_s(void)
{
    struct timespec ts;
    if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) != 0) return -1;
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* The program's compute is user code, which the scheduler preempts at its
 * ticks; reading this thread's CPU clock is a system call that brings the
 * scheduler's accounting of the thread up to date (update_curr), where it may
 * preempt the reader at once. A spin that read it at every turn gave a woken
 * progress thread the core sooner than the program's compute did (DDP, 2
 * ranks on 2 cores, torch 2.6: the all-reduce issued before the heaviest
 * compute took 27 ms replayed against 45 recorded, 53 with this;
 * docs/PERFORMANCE.md). So it spins on the wall clock (no system call) for
 * as long as the CPU time still missing, then reads the CPU clock again: a
 * thread gets at most a CPU second a second, so it never overshoots. */
double replay_spend_cpu(double until_s, double cap_s)
{
    double start = coll__now_s(), cpu;
    while ((cpu = replay_thread_cpu_s()) >= 0 && until_s - cpu > 1e-6) {
        double end = coll__now_s() + (until_s - cpu);
        if (end > start + cap_s) end = start + cap_s;
        while (coll__now_s() < end) {
        }
        if (coll__now_s() - start >= cap_s) break;
    }
    return coll__now_s() - start;
}
