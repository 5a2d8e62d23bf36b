/* The trace format's ops: names and what each carries (root, peer, reduction). */
#include <string.h>

#include "replay/trace.h"

static const char *const names[REPLAY_OP_COUNT] = {"allreduce", "allgather", "reducescatter",
                                                   "broadcast", "reduce",    "alltoall",
                                                   "barrier",   "send",      "recv",
                                                   "gather",    "scatter"};

const char *replay_op_name(replay_op op)
{
    return (unsigned)op < REPLAY_OP_COUNT ? names[op] : "invalid-op";
}

int replay_op_parse(const char *name, replay_op *out)
{
    for (int i = 0; i < REPLAY_OP_COUNT; i++)
        if (name && strcmp(name, names[i]) == 0) {
            *out = (replay_op)i;
            return 0;
        }
    return -1;
}

int replay_op_has_red(replay_op op)
{
    return op == REPLAY_ALLREDUCE || op == REPLAY_REDUCESCATTER || op == REPLAY_REDUCE;
}

int replay_op_has_root(replay_op op)
{
    return op == REPLAY_BROADCAST || op == REPLAY_REDUCE || op == REPLAY_GATHER ||
           op == REPLAY_SCATTER;
}

int replay_op_is_p2p(replay_op op) { return op == REPLAY_SEND || op == REPLAY_RECV; }

uint64_t replay_call_split(const replay_call *c, int peer, int out)
{
    if (!c->sp.n) return c->count;
    return out ? c->sp.out[peer] : c->sp.in[peer];
}
