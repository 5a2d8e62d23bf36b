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
    int bind;          /* replay_bind */
    int recorded_plan; /* --plan recorded (1, the default) or probe (0) */
    double timeout_s;
    const char *csv_path, *json_path;
    const char *calls_path; /* --calls: every call of every rank and turn (replay_calls.h) */
    const char *rdv_dir;    /* --rdv-dir: given by the launcher to its ranks */
    bench_multinode mn;     /* --nnodes ...: this host's ranks of a world across hosts */
} replay_cli;

/* --bind: how a rank's threads are placed. recorded: as the program's were
 * (its trace's "cpus": one core each where the program ran on one CPU, the
 * scheduler's choice otherwise); core: one core each; none: the scheduler's. */
typedef enum replay_bind { REPLAY_BIND_RECORDED, REPLAY_BIND_CORE, REPLAY_BIND_NONE } replay_bind;

/* "rows.jsonl", "calls.csv" and "traces" in the job's private directory. */
#define REPLAY_ROWS_FILE "rows.jsonl"
#define REPLAY_CALLS_FILE "calls.csv"
#define REPLAY_TRACES_FILE "traces"

/* Inside a rank: replays its trace on every backend in turn, rank 0 printing
 * the tables and writing the rows into the private directory. Exit code. */
int cmd_replay_rank(const replay_cli *o, const coll_launch_env *env);

struct replay_trace;
/* Inside a rank another launcher started (mpirun, srun, torchrun): its trace
 * t, read and checked against every rank's by every rank; every --backend in
 * turn (none: the CLI's default); rank 0 prints the tables and writes --csv
 * and -J itself. Exit code, alike on every rank where a check fails. */
int cmd_replay_rank_outside(const replay_cli *o, const coll_launch_env *env,
                            const struct replay_trace *t);
/* --csv, -J and --calls can be written (jansson built in for the first two,
 * each a file we may create or replace): 0, or the exit code with the
 * message said (cmd_replay_outputs.c). */
int cmd_replay_check_outputs(const replay_cli *o);
/* Whether the run writes an output file, into a private directory first. */
int cmd_replay_writes(const replay_cli *o);
/* Every output from the private directory dir: --csv and -J from its rows,
 * --calls from its calls (the header, then the rows), each replaced
 * atomically. 0, or EXIT_RUNTIME with the message said. */
int cmd_replay_write_outputs(const replay_cli *o, const char *dir);
/* A private directory $TMPDIR/collbench-replay.XXXXXX into dir: 0, or
 * EXIT_RUNTIME said (dir then empty). */
int cmd_replay_make_dir(char *dir, size_t len);

#endif
