/* collbench replay's options, shared by the launcher (cmd_replay.c) and the
 * ranks (cmd_replay_rank.c). */
#ifndef COLLBENCH_CMD_REPLAY_H
#define COLLBENCH_CMD_REPLAY_H

#include <stddef.h>

#include "coll_tool.h"
#include "engine/multinode_opts.h"

#define REPLAY_PREFIX "collbench replay"
#define REPLAY_MAX_TRACES 4096
#define REPLAY_MAX_BACKENDS 8

typedef struct replay_cli {
    const char *traces[REPLAY_MAX_TRACES]; /* as given: directories or files */
    size_t ntraces;
    char *backends[REPLAY_MAX_BACKENDS]; /* --backend, split at commas (malloc'd) */
    size_t nbackends;
    int nprocs; /* -P; 0: the trace's world */
    int coll_buffers, gaps, overlap, passes;
    double timeout_s;
    const char *csv_path, *json_path;
    const char *rdv_dir; /* --rdv-dir: given by the launcher to its ranks */
    bench_multinode mn;  /* --nnodes ...: this host's ranks of a world across hosts */
} replay_cli;

/* "rows.jsonl" and "traces" in the job's private directory. */
#define REPLAY_ROWS_FILE "rows.jsonl"
#define REPLAY_TRACES_FILE "traces"

/* Inside a rank: replays its trace on every backend in turn, rank 0 printing
 * the tables and writing the rows into the private directory. Exit code. */
int cmd_replay_rank(const replay_cli *o, const coll_launch_env *env);

#endif
