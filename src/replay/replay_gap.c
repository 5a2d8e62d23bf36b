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

double replay_spend_cpu(double until_s, double cap_s)
{
    double start = coll__now_s();
    while (replay_thread_cpu_s() < until_s && coll__now_s() - start < cap_s) {
    }
    return coll__now_s() - start;
}
