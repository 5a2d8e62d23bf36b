/* collbench replay inside a rank: its trace (the launcher lists the files in
 * the job's private directory; under another launcher every rank has read
 * them all), a world communicator on tcp for the start barrier and the
 * results, then each backend in turn, the passes alternated (A B, then B A).
 * Rank 0 prints each turn's table and appends its rows to the private
 * directory, from which the launcher writes --csv and -J (under another
 * launcher rank 0 makes that directory and writes them itself). */
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/atomic_file.h"
#include "core/dir_remove.h"
#include "replay/replay_arrival.h"
#include "replay/replay_calls.h"
#include "replay/replay_median.h"
#include "replay/replay_output.h"
#include "replay/replay_report.h"
#include "replay/replay_run.h"
#include "replay/trace.h"
#include "cli_common.h"
#include "cmd_replay.h"

/* Line `rank` of the launcher's list: this rank's trace. */
static int trace_path(const replay_cli *o, int rank, char *out, size_t len)
{
    char list[4096];
    snprintf(list, sizeof list, "%s/" REPLAY_TRACES_FILE, o->rdv_dir);
    FILE *f = fopen(list, "r");
    int at = 0, found = 0;
    while (f && !found && fgets(out, (int)len, f))
        if (at++ == rank) found = 1;
    if (f) fclose(f);
    if (!found) return -1;
    out[strcspn(out, "\n")] = '\0';
    return 0;
}

static int fail(const coll_launch_env *env, const char *what, const char *msg, int code)
{
    fprintf(stderr, REPLAY_PREFIX ": rank %d: %s%s\n", env->rank, what, msg);
    return code;
}

/* Rank 0: the turn's table on stdout and its rows appended to the private directory. */
static int report_turn(const char *rows_dir, const replay_turn *turn, const replay_measure *all,
                       int world, const replay_medians *med)
{
    replay_summary s;
    char *rows = NULL, path[PATH_MAX + 32], err[600];
    size_t len = 0;
    replay_summarize(all, world, &s);
    s.med = *med;
    printf("\n");
    replay_print(stdout, turn, &s);
    fflush(stdout);
    if (!rows_dir) return 0; /* no --csv or -J */
    FILE *f = open_memstream(&rows, &len);
    if (!f) return EXIT_RUNTIME;
    replay_rows_jsonl(f, turn, &s);
    fclose(f);
    snprintf(path, sizeof path, "%s/" REPLAY_ROWS_FILE, rows_dir);
    int rc = coll__file_append(path, rows, len, err, sizeof err);
    free(rows);
    if (rc) fprintf(stderr, REPLAY_PREFIX ": %s\n", err);
    return rc ? EXIT_RUNTIME : 0;
}

/* --calls: every rank's rows of the turn to rank 0, which appends them to
 * the private directory. Every rank takes part, also where one has no memory
 * for its rows (it sends none); the exit code, alike where the gather fails. */
static int turn_calls(const coll_launch_env *env, const replay_trace *t, coll_comm *world,
                      const char *backend, int pass, double rec_from_s, const double *issue_s,
                      const double *call_s, const char *rows_dir)
{
    char *mine = NULL, *rows = NULL, path[PATH_MAX + 32], err[600];
    size_t len = 0, alllen = 0;
    int oom = replay_calls_format(t, backend, pass, rec_from_s, issue_s, call_s, &mine, &len);
    int rc = replay_calls_gather(world, oom ? "" : mine, oom ? 0 : len, &rows, &alllen);
    free(mine);
    int32_t code = rc    ? fail(env, "the calls' rows: ",
                             rc == COLL_ENOMEM ? "out of memory" : coll_comm_errmsg(world),
                                EXIT_RUNTIME)
                   : oom ? fail(env, "the calls' rows: ", "out of memory", EXIT_RUNTIME)
                         : 0;
    if (env->rank == 0 && !code && rows_dir) {
        snprintf(path, sizeof path, "%s/" REPLAY_CALLS_FILE, rows_dir);
        if (coll__file_append(path, rows, alllen, err, sizeof err))
            code = fail(env, "", err, EXIT_RUNTIME);
    }
    free(rows);
    /* one verdict: a rank that failed alone must not leave the others going on */
    int32_t worst = code;
    if (coll_allreduce(world, &code, &worst, 1, COLL_INT32, COLL_MAX) && !code)
        worst = fail(env, "the calls' rows: ", coll_comm_errmsg(world), EXIT_RUNTIME);
    return worst;
}

/* Whether some group of t has a recorded plan (--plan recorded applies it). */
static int has_plan(const replay_trace *t)
{
    for (size_t i = 0; i < t->ngroups; i++)
        if (t->groups[i].plan) return 1;
    return 0;
}

static int run_turns(const replay_cli *o, const coll_launch_env *env, const replay_trace *t,
                     coll_comm *world, char **names, int nb, const char *rows_dir)
{
    int local_size = env->local_world_size > 0 ? env->local_world_size : env->world_size;
    int local_rank = env->local_rank >= 0 ? env->local_rank : env->rank;
    replay_measure mine, *all = calloc((size_t)env->world_size, sizeof *all);
    double *call_s = calloc(t->ncalls + 1, sizeof *call_s);   /* each call's time: the medians */
    double *issue_s = calloc(t->ncalls + 1, sizeof *issue_s); /* and its issue: --calls */
    replay_medians med;
    char err[1024];
    if (!all || !call_s || !issue_s) {
        free(all), free(call_s), free(issue_s);
        return fail(env, "", "out of memory", EXIT_RUNTIME);
    }
    double arrival_s = 0;
    int code = 0, one_clock = 0;
    if (replay_arrival(t, world, &arrival_s, &one_clock))
        code = fail(env, "the first calls' arrival: ", coll_comm_errmsg(world), EXIT_RUNTIME);
    /* With more ranks than cores the replay's ranks leave a call apart by the
     * scheduler, as the program's did: spending the recorded lateness too
     * counted it twice (DDP, 4 ranks on 2 cores, one trace replayed A B A B:
     * its set-up broadcasts' median 0.75 of the recording's, 0.93 without). */
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    int exit_late = one_clock && (cpus < 1 || local_size <= cpus);
    /* A profiler's operator times are the calling thread's wall time in them:
     * its CPU time only while it had a core to itself. With more ranks than
     * cores a rank's thread had about cores / ranks of one, and that share is
     * spun (DDP on gloo, 4 ranks on 2 cores, two profiles replayed A B A B:
     * on gloo 1.07-1.15 of the recorded communication spun so, 0.76-0.90
     * slept; on shm against the program on coll 1.02-1.06 and 0.68-0.79;
     * docs/PERFORMANCE.md "Two communicators for torch's gloo"). */
    int profiler = !strcmp(t->source, "torch-profiler");
    double cpu_share = profiler && cpus > 0 && local_size > cpus ? (double)cpus / local_size : 1;
    /* Placed as the program's threads were: a rank pinned to a core shares it
     * between its compute and its calls' progress threads, which move with
     * the scheduler otherwise, and the calls beside the compute run at a
     * different speed (DDP, 2 ranks on 2 cores, unpinned: one trace pinned
     * read 0.73-1.03 of its communication from pass to pass, unpinned
     * 1.00-1.03; docs/PERFORMANCE.md). */
    int pin = o->bind == REPLAY_BIND_CORE || (o->bind == REPLAY_BIND_RECORDED && t->cpus == 1);
    const char *bind = getenv(COLL_ENV_BIND);
    if (!bind) bind = pin ? "core" : "none";
    cli_rank_pin_to(pin, local_rank, local_size); /* the same for every backend */
    for (int pass = 0; pass < o->passes && !code; pass++)
        for (int i = 0; i < nb && !code; i++) {
            const char *b = names[pass % 2 ? nb - 1 - i : i];
            replay_opts ro = {.backend = b,
                              .coll_buffers = o->coll_buffers,
                              .gaps = o->gaps,
                              .overlap = o->overlap,
                              .timeout_s = o->timeout_s,
                              .arrival_s = arrival_s,
                              .exit_late = exit_late,
                              .one_clock = one_clock,
                              .recorded_plan = o->recorded_plan,
                              .cpu_share = cpu_share,
                              .world = world,
                              .call_s = call_s,
                              .issue_s = issue_s};
            int rc = replay_run(t, &ro, &mine, err, sizeof err);
            if (rc) {
                code = fail(env, "", err,
                            rc == COLL_EUNAVAIL                       ? EXIT_UNAVAILABLE
                            : rc == COLL_EINVAL || rc == COLL_ENOTSUP ? EXIT_USAGE
                                                                      : EXIT_RUNTIME);
                break;
            }
            rc = coll_allgather(world, &mine, all, REPLAY_MEASURE_DOUBLES, COLL_FLOAT64);
            if (rc) {
                code = fail(env, "gathering the results: ", coll_comm_errmsg(world), EXIT_RUNTIME);
                break;
            }
            rc = replay_median_gather(t, call_s, world, &med);
            if (rc) {
                code = fail(env, "the calls' medians: ",
                            rc == COLL_ENOMEM ? "out of memory" : coll_comm_errmsg(world),
                            EXIT_RUNTIME);
                break;
            }
            replay_turn turn = {.trace = o->traces[0],
                                .backend = b,
                                .pass = pass + 1,
                                .passes = o->passes,
                                .buffers = o->coll_buffers ? "coll" : "malloc",
                                .gaps = replay_gaps_name((replay_gaps)o->gaps),
                                .bind = bind,
                                .plan = o->recorded_plan && has_plan(t) ? "recorded" : "probed",
                                .lanes = replay_lanes(t, o->overlap, b),
                                .overlap = replay_overlap_name(replay_keeps_in_flight(t, o->overlap)
                                                                   ? REPLAY_OVERLAP_RECORDED
                                                                   : REPLAY_OVERLAP_NONE)};
            if (env->rank == 0) code = report_turn(rows_dir, &turn, all, env->world_size, &med);
            /* every rank, whatever rank 0's table did: the gather is collective */
            int calls_code = o->calls_path
                                 ? turn_calls(env, t, world, b, pass + 1, one_clock ? arrival_s : 0,
                                              issue_s, call_s, rows_dir)
                                 : 0;
            if (!code) code = calls_code;
        }
    free(all);
    free(call_s);
    free(issue_s);
    return code;
}

/* Rank 0's step after the world is up, under another launcher: the outputs
 * checked and a private directory for the rows made, the verdict sent to every
 * rank (none may wait on a rank 0 that gave up). rows: the directory ("" for
 * none). 0 or the exit code, on every rank. */
static int outside_start(const replay_cli *o, const coll_launch_env *env, coll_comm *world,
                         char *rows, size_t len)
{
    int32_t code = 0;
    rows[0] = '\0';
    if (env->rank == 0) code = cmd_replay_check_outputs(o);
    if (env->rank == 0 && !code && cmd_replay_writes(o)) code = cmd_replay_make_dir(rows, len);
    if (coll_broadcast(world, &code, &code, 1, COLL_INT32, 0))
        return fail(env, "the world communicator: ", coll_comm_errmsg(world), EXIT_RUNTIME);
    return code;
}

/* The world communicator, then every turn. backends: a comma list (split
 * here); outside: started by another launcher (outside_start, and rank 0
 * writes --csv and -J at the end). */
static int replay_world(const replay_cli *o, const coll_launch_env *env, const replay_trace *t,
                        char *backends, int outside)
{
    char *save = NULL, *names[REPLAY_MAX_BACKENDS], rows[PATH_MAX];
    int nb = 0;
    for (char *b = strtok_r(backends, ",", &save); b && nb < REPLAY_MAX_BACKENDS;
         b = strtok_r(NULL, ",", &save))
        names[nb++] = b;
    coll_config cfg;
    coll_config_init(&cfg);
    cfg.backend = "tcp"; /* the barriers and the results: always there */
    /* A rank with no calls left waits here for the others' remaining ones,
     * however long they take; a rank that hangs in a call times out there
     * (-T) and exits, and the launcher then stops the rest. */
    cfg.timeout_s = 7 * 86400.0;
    coll_comm *world = NULL;
    int code = 0, rc = coll_comm_create(&cfg, &world);
    if (rc)
        code = fail(env, "the world communicator: ",
                    *coll_last_create_error() ? coll_last_create_error() : coll_strerror(rc),
                    EXIT_RUNTIME);
    snprintf(rows, sizeof rows, "%s", outside ? "" : o->rdv_dir);
    if (!code && outside) code = outside_start(o, env, world, rows, sizeof rows);
    if (!code) code = run_turns(o, env, t, world, names, nb, *rows ? rows : NULL);
    if (world) coll_comm_destroy(world);
    if (outside && *rows) { /* rank 0 */
        if (!code) code = cmd_replay_write_outputs(o, rows);
        coll__remove_flat_dir(rows);
    }
    return code;
}

int cmd_replay_rank(const replay_cli *o, const coll_launch_env *env)
{
    char path[4096], err[1024], list[256];
    replay_trace t;
    if (!o->rdv_dir)
        return fail(env, "", "ranks of collbench replay are started by collbench replay itself",
                    EXIT_USAGE);
    if (trace_path(o, env->rank, path, sizeof path))
        return fail(env, "", "no trace in the launcher's list for this rank", EXIT_USAGE);
    if (replay_trace_read(path, REPLAY_TRACE_MAX_BYTES, &t, NULL, err, sizeof err)) {
        replay_trace_free(&t);
        return fail(env, "", err, EXIT_USAGE);
    }
    if (t.rank != env->rank || t.world != env->world_size) {
        snprintf(err, sizeof err, "%.900s is rank %d of %d, this is rank %d of %d", path, t.rank,
                 t.world, env->rank, env->world_size);
        replay_trace_free(&t);
        return fail(env, "", err, EXIT_USAGE);
    }
    const char *named = cli_rank_backend(REPLAY_PREFIX, CLI_ENV_BACKEND, o->backends, o->nbackends,
                                         env->rank);
    snprintf(list, sizeof list, "%s", named ? named : "tcp");
    int code = replay_world(o, env, &t, list, 0);
    replay_trace_free(&t);
    return code;
}

int cmd_replay_rank_outside(const replay_cli *o, const coll_launch_env *env, const replay_trace *t)
{
    char list[256] = "";
    size_t used = 0;
    /* every backend asked, in turn, as under collbench's own launcher */
    for (size_t i = 0; i < o->nbackends && used < sizeof list; i++)
        used += (size_t)snprintf(list + used, sizeof list - used, "%s%s", i ? "," : "",
                                 o->backends[i]);
    if (!o->nbackends) {
        const char *b = cli_rank_backend(REPLAY_PREFIX, CLI_ENV_BACKEND, NULL, 0, env->rank);
        snprintf(list, sizeof list, "%s", b ? b : "tcp");
    }
    return replay_world(o, env, t, list, 1);
}
