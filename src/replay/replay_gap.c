/* The program's own work between two calls, spent again. Compute that held
 * the rank's core (a CPU program's) is spun, so that the replay's calls share
 * the cores with it as the program's did. Compute that ran elsewhere (a GPU's)
 * is slept when long, spun when short: six ranks on two cores must not starve
 * each other, so a long gap gives the CPU away; a short one would overshoot
 * as a sleep (the wake-up costs about 50-100 us here). */
#include <string.h>

#include "core/clock.h"
#include "replay/replay_run.h"

static const char *const gaps_names[] = {"none", "recorded", "busy"};

const char *replay_gaps_name(replay_gaps g)
{
    return (unsigned)g < 3 ? gaps_names[g] : "invalid-gaps";
}

int replay_gaps_parse(const char *name, replay_gaps *g)
{
    for (int i = 0; i < 3; i++)
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
