/* The program's own work between two calls, spent again: slept when long, spun
 * when short. Six ranks on two cores must not starve each other, so a long gap
 * gives the CPU away; a short one would overshoot as a sleep (the wake-up
 * costs about 50-100 us here), so it spins on the clock. */
#include "core/clock.h"
#include "replay/replay_run.h"

double replay_spend_gap(double s)
{
    double start = coll__now_s();
    if (!(s > 0)) return 0;
    if (s >= REPLAY_SLEEP_GAP_S) {
        coll__sleep_s(s);
    } else {
        while (coll__now_s() - start < s) {
        }
    }
    return coll__now_s() - start;
}
