/* collbench replay TRACE...: a program's recorded communication (one trace per
 * rank, docs/DESIGN.md "Trace format") replayed on each backend in turn.
 *
 * The launcher reads every rank's trace and checks them against each other
 * before anything runs (an inconsistent trace is exit 2, never a hang), makes
 * a private directory (the groups' file:// stores, the list of traces, the
 * rows rank 0 writes), launches the trace's world of ranks of itself (one
 * launch runs every backend: cmd_replay_rank.c) and writes --csv and -J from the
 * rows, atomically. */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/dir_remove.h"
#include "engine/memory_need.h"
#include "replay/replay_run.h"
#include "replay/replay_output.h"
#include "replay/trace.h"
#include "replay/trace_files.h"
#include "cli_launch.h"
#include "cmd_replay.h"
#include "cli_trace_set.h"

#define O(c) ((replay_cli *)(c)->user)

static int on_procs(bench_opt_ctx *c, const char *v)
{
    return bench_opt_int(c, v, 1, 1 << 20, &O(c)->nprocs);
}
static int on_backend(bench_opt_ctx *c, const char *v)
{
    replay_cli *o = O(c);
    char *list = strdup(v), *save = NULL;
    if (!list) return bench_opt_fail(c, "out of memory");
    for (char *b = strtok_r(list, ",", &save); b; b = strtok_r(NULL, ",", &save)) {
        if (o->nbackends == REPLAY_MAX_BACKENDS) {
            free(list);
            return bench_opt_fail(c, "at most %d backends", REPLAY_MAX_BACKENDS);
        }
        if (!(o->backends[o->nbackends++] = strdup(b))) break;
    }
    free(list);
    return 0;
}
static int on_buffers(bench_opt_ctx *c, const char *v)
{
    if (strcmp(v, "malloc") && strcmp(v, "coll"))
        return bench_opt_fail(c, "'%s': malloc or coll", v);
    O(c)->coll_buffers = strcmp(v, "coll") == 0;
    return 0;
}
static int on_gaps(bench_opt_ctx *c, const char *v)
{
    replay_gaps g;
    if (replay_gaps_parse(v, &g))
        return bench_opt_fail(c, "'%s': recorded, sleep, busy or none", v);
    O(c)->gaps = (int)g;
    return 0;
}
static int on_overlap(bench_opt_ctx *c, const char *v)
{
    replay_overlap o;
    if (replay_overlap_parse(v, &o)) return bench_opt_fail(c, "'%s': auto, recorded or none", v);
    O(c)->overlap = (int)o;
    return 0;
}
static int on_bind(bench_opt_ctx *c, const char *v)
{
    static const char *const names[] = {[REPLAY_BIND_RECORDED] = "recorded",
                                        [REPLAY_BIND_CORE] = "core",
                                        [REPLAY_BIND_NONE] = "none"};
    for (int i = 0; i < 3; i++)
        if (!strcmp(v, names[i])) return O(c)->bind = i, 0;
    return bench_opt_fail(c, "'%s': recorded, core or none", v);
}
static int on_plan(bench_opt_ctx *c, const char *v)
{
    if (strcmp(v, "recorded") && strcmp(v, "probe"))
        return bench_opt_fail(c, "'%s': recorded or probe", v);
    O(c)->recorded_plan = !strcmp(v, "recorded");
    return 0;
}
static int on_passes(bench_opt_ctx *c, const char *v)
{
    return bench_opt_int(c, v, 1, 100, &O(c)->passes);
}
static int on_csv(bench_opt_ctx *c, const char *v)
{
    O(c)->csv_path = v;
    return 0;
}
static int on_json(bench_opt_ctx *c, const char *v)
{
    O(c)->json_path = v;
    return 0;
}
static int on_calls(bench_opt_ctx *c, const char *v)
{
    O(c)->calls_path = v;
    return 0;
}
static int on_timeout(bench_opt_ctx *c, const char *v)
{
    return bench_opt_double(c, v, 0, 1, BENCH_MAX_TIMEOUT_S, 0, &O(c)->timeout_s);
}
static int on_rdv(bench_opt_ctx *c, const char *v)
{
    O(c)->rdv_dir = v;
    return 0;
}
static int on_trace(bench_opt_ctx *c, const char *v)
{
    replay_cli *o = O(c);
    if (o->ntraces == REPLAY_MAX_TRACES)
        return bench_opt_fail(c, "more than %d traces", REPLAY_MAX_TRACES);
    o->traces[o->ntraces++] = v;
    return 0;
}

static const bench_opt opt_table[] = {
    {0, "backend", "LIST", on_backend,
     "backends to replay on, in turn (default: every one a sweep runs here)"},
    {0, "buffers", "KIND", on_buffers, "malloc (default) or coll (coll_alloc) buffers"},
    {0, "gaps", "HOW", on_gaps,
     "recorded (default): spend each recorded gap before its call:\n"
     "first the CPU time the program's calling thread used in it, spun\n"
     "while the calls issued before run (where the trace has it: the\n"
     "coll backend records it), then the rest of its wall time, a\n"
     "sleep from 200 us up, a spin below, each at most half of -T;\n"
     "sleep: the same without the CPU time (compute that left the CPU\n"
     "free, a GPU's; ranks that outnumber the cores do not starve each\n"
     "other); busy: spin through every gap (compute that held a core\n"
     "all the time); none: the calls back to back"},
    {0, "overlap", "HOW", on_overlap,
     "recorded: keep calls in flight together as the program did (an\n"
     "async call issued before the earlier ones ended), each call timed\n"
     "from its issue to its end, as recorded; none: each call alone (a\n"
     "trace without times always is); auto (default): recorded. A program\n"
     "on torch's gloo replayed on gloo runs on two communicators per group,\n"
     "its calls dealt to them in turn: torch's gloo runs two calls of a\n"
     "group at once, a libcoll communicator one"},
    {0, "bind", "HOW", on_bind,
     "recorded (default): each rank's threads placed as the program's\n"
     "were: pinned to a core each where its trace says it ran on one CPU,\n"
     "else left to the scheduler (also for a trace that does not say, as\n"
     "torchrun leaves a program); core: one core per rank; none: the\n"
     "scheduler's; $COLL_BIND set: the library's binding, as elsewhere"},
    {0, "plan", "HOW", on_plan,
     "recorded (default): each group's communicator plans as the\n"
     "program's did, where its trace says how (the torch backend records\n"
     "what shm's probes decided: its plan lines); shm's probes still run\n"
     "where the program's did, for the time its first calls paid, their\n"
     "verdicts not taken (COLL_SHM_PROBE_GIVEN=0: not run); probe: this\n"
     "machine's probes decide now (as without a plan line)"},
    {0, "passes", "N", on_passes, "replay N times, the backends reversed every other pass"},
    {0, "csv", "FILE", on_csv, "write the rows as CSV (replaced atomically)"},
    {'J', "json", "FILE", on_json, "write the rows as JSON (replaced atomically)"},
    {0, "calls", "FILE", on_calls,
     "write every call of every rank and turn as CSV: its recorded and\n"
     "replayed start (s from the turn's start; recorded on one clock\n"
     "where the traces name one host) and time (replaced atomically)"},
    {'P', NULL, "N", on_procs, "ranks: must be the trace's world (the default)"},
    {'T', NULL, "SECONDS", on_timeout,
     "timeout of every replayed call and group set-up (default 60)"},
    {0, "rdv-dir", "DIR", on_rdv, NULL}, /* the launcher's private directory, for its ranks */
    {'h', "help", NULL, bench_opt_help, "this help"},
};

static void usage(FILE *f)
{
    fprintf(f, "usage: collbench replay TRACE... [options]\n\n"
               "Replays a program's recorded communication (COLL_TRACE=DIR on the torch\n"
               "backend coll: one rank<R>.jsonl per rank) on each backend in turn: every\n"
               "process group, every call in order with its sizes, dtypes, reductions,\n"
               "roots and peers, the recorded compute gaps between them. TRACE is a\n"
               "directory of rank<R>.jsonl files, or the files. The ranks' traces are\n"
               "checked against each other first (exit 2 naming the first disagreement).\n"
               "Per backend: total time, communication, exposed communication (total minus\n"
               "the gaps), per collective and size class, busbw, one call's median time\n"
               "(each call position's mean over the ranks, the median over the calls);\n"
               "recorded against replayed where the trace has its times. It launches the\n"
               "trace's world itself; under mpirun, srun or torchrun (as many ranks as the\n"
               "trace's world) every rank reads every trace and rank 0 writes the outputs.\n\n");
    bench_opt_usage(f, opt_table, BENCH_OPT_COUNT(opt_table), 22);
    bench_multinode_usage(f, 22);
    fprintf(f, "\nAcross hosts (--nnodes): every host runs the same command with its\n"
               "--node-rank and the same trace files; the groups meet over TCP; node 0\n"
               "prints the tables and writes --csv, -J and --calls.\n");
}

static int parse_opts(int argc, char **argv, replay_cli *o)
{
    memset(o, 0, sizeof *o);
    o->gaps = REPLAY_GAPS_RECORDED;
    o->overlap = REPLAY_OVERLAP_AUTO;
    o->passes = 1;
    o->timeout_s = 60;
    o->recorded_plan = 1;
    char err[256];
    int rc = cli_parse_options(REPLAY_PREFIX, opt_table, BENCH_OPT_COUNT(opt_table), o, &o->mn,
                               on_trace, argc, argv);
    if (rc) return rc;
    if (bench_multinode_finish(&o->mn, 1 << 20, err, sizeof err))
        return fprintf(stderr, REPLAY_PREFIX ": %s\n", err), EXIT_USAGE;
    return 0;
}

/* The world's ranks this host starts: all of them, or --nproc-per-node. */
static int first_local(const replay_cli *o)
{
    return o->mn.nnodes ? o->mn.node_rank * o->mn.nproc_per_node : 0;
}

/* ================= the launcher ================= */

/* Every trace read, checked against the others and replayable. 0 or an exit
 * code, said. */
static int load(const replay_cli *o, cli_trace_set *s)
{
    char err[2048];
    int code = cli_trace_set_load(REPLAY_PREFIX, (const char *const *)o->traces, o->ntraces, 1, s);
    for (int r = 0; !code && r < s->world; r++) /* in rank order */
        if (replay_trace_replayable(s->by_rank[r], err, sizeof err))
            code = EXIT_USAGE, fprintf(stderr, REPLAY_PREFIX ": %s\n", err);
    return code;
}

/* Every rank's buffers against what this host can give now, before any rank
 * allocates (engine/memory_need.h): the OOM killer might pick any process. */
static int check_memory(replay_trace **by_rank, int first, int nlocal, int overlap)
{
    uint64_t need = 0, most = 0, avail;
    int big = 0;
    for (int r = first; r < first + nlocal; r++) {
        uint64_t b = replay_buffer_bytes(by_rank[r], overlap);
        need = b > UINT64_MAX - need ? UINT64_MAX : need + b;
        if (b > most) most = b, big = r;
    }
    if (bench_memory_available(&avail) != 0 || need <= avail / 10 * 8) return 0;
    fprintf(stderr,
            REPLAY_PREFIX ": the trace's buffers need %.1f GiB on this host (rank %d's: %.1f "
                          "GiB), more than 80%% of the %.1f GiB available\n",
            (double)need / (1 << 30), big, (double)most / (1 << 30), (double)avail / (1 << 30));
    return EXIT_USAGE;
}

static int check_request(const replay_cli *o, replay_trace **by_rank, int world)
{
    long nofile;
    int code;
    int most = cli_max_local_ranks(&nofile);
    int nlocal = o->mn.nnodes ? o->mn.nproc_per_node : world;
    if (o->mn.nnodes && o->mn.nnodes * o->mn.nproc_per_node != world)
        return fprintf(stderr,
                       REPLAY_PREFIX ": --nnodes %d x --nproc-per-node %d ranks differ from the "
                                     "trace's world of %d ranks (%s)\n",
                       o->mn.nnodes, o->mn.nproc_per_node, world, o->traces[0]),
               EXIT_USAGE;
    if (o->nprocs && o->nprocs != world)
        return fprintf(stderr,
                       REPLAY_PREFIX ": -P %d differs from the trace's world of %d ranks (%s)\n",
                       o->nprocs, world, o->traces[0]),
               EXIT_USAGE;
    if (nlocal > most)
        return fprintf(stderr,
                       REPLAY_PREFIX ": %d ranks of the trace's world on this host: at most %d "
                                     "(open files are limited to %ld, ulimit -n)\n",
                       nlocal, most, nofile),
               EXIT_USAGE;
    if ((code = check_memory(by_rank, first_local(o), nlocal, o->overlap))) return code;
    return cmd_replay_check_outputs(o);
}


/* A rank another launcher started (mpirun, srun, torchrun): every rank reads
 * and checks every rank's trace (the same files on every host, as across
 * hosts under collbench's own launcher), so that a bad trace stops every rank
 * alike, before any waits for another. */
static int outside(const replay_cli *o, const coll_launch_env *env)
{
    if (o->mn.nnodes)
        return fprintf(stderr,
                       REPLAY_PREFIX ": rank %d: --nnodes is collbench's own launcher across "
                                     "hosts; under another launcher leave it out\n",
                       env->rank),
               EXIT_USAGE;
    cli_trace_set s;
    int code = load(o, &s);
    if (!code && env->world_size != s.world)
        code = EXIT_USAGE,
        fprintf(stderr,
                REPLAY_PREFIX ": rank %d: the launcher started %d ranks, the trace's world is "
                              "%d (%s)\n",
                env->rank, env->world_size, s.world, o->traces[0]);
    if (!code && o->nprocs && o->nprocs != s.world)
        code = EXIT_USAGE,
        fprintf(stderr, REPLAY_PREFIX ": -P %d differs from the trace's world of %d ranks (%s)\n",
                o->nprocs, s.world, o->traces[0]);
    if (!code) code = cmd_replay_rank_outside(o, env, s.by_rank[env->rank]);
    cli_trace_set_free(&s);
    return code;
}

/* The backends, joined with commas, that one local launch runs in turn. */
static int pick_backends(const replay_cli *o, const cli_launch_plan *plan, char *list, size_t len)
{
    const char *picked[REPLAY_MAX_BACKENDS];
    size_t n = 0, used = 0;
    int code = cli_plan_pick_backends(plan, REPLAY_PREFIX, o->backends, o->nbackends, picked,
                                      REPLAY_MAX_BACKENDS, &n);
    if (code) return code;
    list[0] = '\0';
    for (size_t i = 0; i < n; i++) {
        if (cli_plan_kind(plan, picked[i]) == CLI_LAUNCH_MPIRUN || !strcmp(picked[i], "nccl"))
            return fprintf(stderr,
                           REPLAY_PREFIX ": --backend %s: not replayed (replay runs host buffers "
                                         "on ranks collbench starts itself)\n",
                           picked[i]),
                   EXIT_USAGE;
        used += (size_t)snprintf(list + used, len - used, "%s%s", used ? "," : "", picked[i]);
        if (used >= len) return EXIT_USAGE;
    }
    return 0;
}

/* The private directory and the list of traces by rank in it. */
static int make_rdv(replay_trace **by_rank, int world, char *dir, size_t len)
{
    int code = cmd_replay_make_dir(dir, len);
    if (code) return code;
    char path[PATH_MAX + 32], abs[PATH_MAX];
    snprintf(path, sizeof path, "%s/" REPLAY_TRACES_FILE, dir);
    FILE *f = fopen(path, "w");
    for (int r = 0; f && r < world; r++)
        fprintf(f, "%s\n", realpath(by_rank[r]->path, abs) ? abs : by_rank[r]->path);
    if (f && fclose(f) == 0) return 0;
    fprintf(stderr, REPLAY_PREFIX ": %s: %s\n", path, strerror(errno));
    coll__remove_flat_dir(dir);
    return EXIT_RUNTIME;
}

static int launch(const replay_cli *o, int world, replay_trace **by_rank, int argc, char **argv)
{
    cli_launch_plan plan;
    char list[256], dir[PATH_MAX];
    cli_plan_choose(&plan, &o->mn);
    plan.default_bind = 0; /* each rank places itself as --bind says (cmd_replay_rank.c) */
    int code = pick_backends(o, &plan, list, sizeof list);
    if (code || (code = make_rdv(by_rank, world, dir, sizeof dir))) return code;
    /* the ranks run our command line again, with the private directory */
    char **args = calloc((size_t)argc + 3, sizeof *args);
    if (!args) return coll__remove_flat_dir(dir), EXIT_RUNTIME;
    memcpy(args, argv, (size_t)argc * sizeof *args);
    args[argc] = "--rdv-dir";
    args[argc + 1] = dir;
    cli_launch l = {.prefix = REPLAY_PREFIX, .what = "replay", .argc = argc + 2, .argv = args};
    code = cli_launch_one(&plan, &l, list, o->mn.nnodes ? o->mn.nproc_per_node : world);
    /* node 0 writes the results (rank 0's rows are in its directory) */
    if (!code && cmd_replay_writes(o) && bench_multinode_writes(&o->mn))
        code = cmd_replay_write_outputs(o, dir);
    coll__remove_flat_dir(dir);
    free(args);
    return code;
}

int cmd_replay(int argc, char **argv)
{
    replay_cli o;
    coll_launch_env env;
    int code = parse_opts(argc, argv, &o);
    if (code == BENCH_OPT_HELP) code = (usage(stdout), 0);
    else if (!code) {
        cli_role role = cli_detect_role(REPLAY_PREFIX, &env);
        if (role == CLI_RANK) code = o.rdv_dir ? cmd_replay_rank(&o, &env) : outside(&o, &env);
        else if (role == CLI_BAD_ENV) code = EXIT_USAGE;
        else {
            cli_trace_set s;
            code = load(&o, &s);
            if (!code) code = check_request(&o, s.by_rank, s.world);
            if (!code) code = launch(&o, s.world, s.by_rank, argc, argv);
            cli_trace_set_free(&s);
        }
    }
    for (size_t i = 0; i < o.nbackends; i++) free(o.backends[i]);
    return code;
}
