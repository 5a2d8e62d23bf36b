/* The size classes a replay reports per collective. */
#include "replay/replay_run.h"

static const char *const names[REPLAY_NSIZE] = {"<64K", "64K-1M", "1M-16M", ">=16M"};

int replay_size_class(uint64_t bytes)
{
    if (bytes < (64u << 10)) return 0;
    if (bytes < (1u << 20)) return 1;
    if (bytes < (16u << 20)) return 2;
    return 3;
}

const char *replay_size_class_name(int k) { return k >= 0 && k < REPLAY_NSIZE ? names[k] : "?"; }
