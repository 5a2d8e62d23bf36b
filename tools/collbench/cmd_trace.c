/* collbench trace import PROFILER_JSON... -o DIR: torch profiler traces (one
 * per rank) into the trace format (DIR/rank<R>.jsonl), checked across ranks
 * before anything is written; collbench trace show DIR|FILE...: what traces
 * hold. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/dir_make.h"
#include "engine/opt_table.h"
#include "exit_codes.h"
#include "replay/trace.h"
#include "replay/trace_files.h"
#include "replay/trace_import.h"
#include "replay/trace_summary.h"
#include "replay/trace_write.h"

#define TRACE_PREFIX "collbench trace"
#define TRACE_MAX_FILES 4096

typedef struct trace_opts {
    const char *outdir;
    int world; /* --world; 0: the files' */
    int force;
    const char *files[TRACE_MAX_FILES];
    size_t nfiles;
} trace_opts;

#define TO(c) ((trace_opts *)(c)->user)

static int on_output(bench_opt_ctx *c, const char *v)
{
    return bench_opt_file(c, v, &TO(c)->outdir);
}
static int on_world(bench_opt_ctx *c, const char *v)
{
    return bench_opt_int(c, v, 1, 1 << 20, &TO(c)->world);
}
static int on_force(bench_opt_ctx *c, const char *v)
{
    (void)v;
    TO(c)->force = 1;
    return 0;
}
static int on_file(bench_opt_ctx *c, const char *arg)
{
    if (TO(c)->nfiles == TRACE_MAX_FILES)
        return bench_opt_fail(c, "more than %d files", TRACE_MAX_FILES);
    TO(c)->files[TO(c)->nfiles++] = arg;
    return 0;
}

static const bench_opt import_table[] = {
    {'o', "output", "DIR", on_output, "the trace directory (created; DIR/rank<R>.jsonl)"},
    {0, "world", "N", on_world,
     "the world size, for files without distributedInfo (else the\nnumber of files); "
     "a file that says another is refused"},
    {'f', "force", NULL, on_force, "replace rank files DIR holds already"},
    {'h', "help", NULL, bench_opt_help, "this text"},
};
static const bench_opt show_table[] = {
    {'h', "help", NULL, bench_opt_help, "this text"},
};

static void usage(FILE *f)
{
    fprintf(f, "usage: collbench trace import PROFILER_JSON... -o DIR [--world N] [--force]\n"
               "       collbench trace show DIR|TRACE...\n\n"
               "import: torch 2.x profiler traces (prof.export_chrome_trace(path), one file per\n"
               "rank) into collbench traces, DIR/rank<R>.jsonl, for `collbench replay DIR`.\n"
               "The calls come from the record_param_comms events where the backend writes\n"
               "them (NCCL, coll), else from the c10d::<collective> events and the backend's own\n"
               "(gloo:<collective>), which carry sizes only under record_shapes=True. A file's\n"
               "rank comes from its distributedInfo, else the events' \"Rank\", else the order\n"
               "of the files. What the profiler does not say is assumed and printed as a\n"
               "warning: the reduction (sum), and the group of calls whose events name none.\n"
               "The ranks' traces are checked against each other before anything is written;\n"
               "then the summary is printed.\n"
               "show: the same summary of traces already written.\n\n"
               "import options:\n");
    bench_opt_usage(f, import_table, BENCH_OPT_COUNT(import_table), 14);
    fprintf(f, "\nexit codes: 0 ok; 2 bad usage or bad input (the message names the file, the\n"
               "event and the problem), or DIR holds rank files (without --force);\n"
               "3 a file could not be written; 4 this build has no jansson.\n");
}

/* Traces checked against each other; by_rank (world entries) filled. */
static int check_all(replay_trace **all, size_t n, replay_trace ***by_rank)
{
    char err[2048];
    int world = all[0]->world;
    if (!(*by_rank = calloc((size_t)world, sizeof **by_rank))) return EXIT_RUNTIME;
    if (replay_trace_check(all, n, *by_rank, err, sizeof err) == 0) return 0;
    fprintf(stderr, TRACE_PREFIX ": the traces disagree: %s\n", err);
    return EXIT_USAGE;
}

/* ---- import ---- */

/* DIR made, or one without rank files, or --force. */
static int prepare_dir(const trace_opts *o)
{
    char err[1024], **old = NULL;
    size_t nold = 0;
    if (coll__dir_make(o->outdir, err, sizeof err) != 0)
        return fprintf(stderr, TRACE_PREFIX ": -o %s: %s\n", o->outdir, err), EXIT_RUNTIME;
    if (replay_rank_files(o->outdir, &old, &nold, err, sizeof err))
        return fprintf(stderr, TRACE_PREFIX ": %s\n", err), EXIT_USAGE;
    int code = 0;
    if (nold && !o->force)
        code = EXIT_USAGE, fprintf(stderr,
                                   TRACE_PREFIX ": %s holds rank files already (%s...): "
                                                "--force replaces them\n",
                                   o->outdir, old[0]);
    /* a trace of another world would mix with this one */
    for (size_t i = 0; !code && i < nold; i++)
        if (unlink(old[i]) != 0)
            code = EXIT_RUNTIME,
            fprintf(stderr, TRACE_PREFIX ": %s: %s\n", old[i], strerror(errno));
    replay_rank_files_free(old, nold);
    return code;
}

static int read_profiles(const trace_opts *o, replay_import *im)
{
    char err[2048];
    int world = o->world ? o->world : (int)o->nfiles;
    for (size_t i = 0; i < o->nfiles; i++) {
        if (replay_import_profiler(o->files[i], (int)i, world, &im[i], err, sizeof err) == 0)
            continue;
        fprintf(stderr, TRACE_PREFIX ": %s\n", err);
#ifdef COLL_HAVE_JANSSON
        return EXIT_USAGE;
#else
        return EXIT_UNAVAILABLE;
#endif
    }
    for (size_t i = 0; i < o->nfiles; i++) {
        if (o->world && im[i].t.world != o->world)
            return fprintf(stderr, TRACE_PREFIX ": %s: world %d (from %s), --world says %d\n",
                           o->files[i], im[i].t.world, im[i].rank_from, o->world),
                   EXIT_USAGE;
        for (size_t j = 0; j < i; j++)
            if (im[j].t.rank == im[i].t.rank)
                return fprintf(stderr, TRACE_PREFIX ": %s and %s are both rank %d (from %s)\n",
                               o->files[j], o->files[i], im[i].t.rank, im[i].rank_from),
                       EXIT_USAGE;
    }
    return 0;
}

/* Every rank's file, or none: a failure removes the ones this run wrote. */
static int write_all(const trace_opts *o, replay_import *im)
{
    char err[2048], path[4096], host[256] = "";
    gethostname(host, sizeof host - 1);
    for (size_t i = 0; i < o->nfiles; i++) {
        snprintf(path, sizeof path, "%s/rank%d.jsonl", o->outdir, im[i].t.rank);
        replay_write_meta m = {.host = host, .backend = im[i].backend, .pid = (long)getpid()};
        if (replay_trace_write(path, &im[i].t, &m, err, sizeof err) == 0) continue;
        fprintf(stderr, TRACE_PREFIX ": %s\n", err);
        for (size_t j = 0; j < i; j++) {
            snprintf(path, sizeof path, "%s/rank%d.jsonl", o->outdir, im[j].t.rank);
            unlink(path);
        }
        return EXIT_RUNTIME;
    }
    return 0;
}

/* The files written, read back as replay reads them and checked again. */
static int verify(const trace_opts *o, const replay_import *im)
{
    char err[2048], path[4096];
    replay_trace *t = calloc(o->nfiles, sizeof *t), **all = calloc(o->nfiles, sizeof *all);
    replay_trace **by_rank = NULL;
    int code = t && all ? 0 : EXIT_RUNTIME;
    for (size_t i = 0; !code && i < o->nfiles; i++) {
        snprintf(path, sizeof path, "%s/rank%d.jsonl", o->outdir, im[i].t.rank);
        all[i] = &t[i];
        if (replay_trace_read(path, REPLAY_TRACE_MAX_BYTES, all[i], NULL, err, sizeof err))
            code = EXIT_RUNTIME, fprintf(stderr, TRACE_PREFIX ": reading back: %s\n", err);
    }
    if (!code) code = check_all(all, o->nfiles, &by_rank);
    if (!code) {
        printf("%s: %zu rank files written\n", o->outdir, o->nfiles);
        replay_trace_summary(stdout, by_rank, all[0]->world);
    }
    for (size_t i = 0; t && i < o->nfiles; i++) replay_trace_free(&t[i]);
    free(t), free(all), free(by_rank);
    return code;
}

/* A subcommand's options into o: 0, BENCH_OPT_HELP (the usage printed) or
 * EXIT_USAGE (said). */
static int parse_sub(const char *sub, const bench_opt *table, size_t n, int argc, char **argv,
                     trace_opts *o)
{
    char err[512];
    memset(o, 0, sizeof *o);
    bench_opt_ctx c = {
        .table = table, .n = n, .user = o, .err = err, .errlen = sizeof err, .positional = on_file};
    int rc = bench_opt_parse(&c, argc, argv);
    if (rc == BENCH_OPT_HELP) return usage(stdout), BENCH_OPT_HELP;
    if (rc) return fprintf(stderr, TRACE_PREFIX " %s: %s\n", sub, err), EXIT_USAGE;
    return 0;
}

static int do_import(int argc, char **argv)
{
    static trace_opts o;
    int rc = parse_sub("import", import_table, BENCH_OPT_COUNT(import_table), argc, argv, &o);
    if (rc) return rc == BENCH_OPT_HELP ? 0 : rc;
    if (!o.nfiles || !o.outdir)
        return fprintf(stderr, TRACE_PREFIX " import: %s (see collbench trace --help)\n",
                       !o.nfiles ? "no profiler trace given" : "no -o DIR"),
               EXIT_USAGE;
    replay_import *im = calloc(o.nfiles, sizeof *im);
    replay_trace **all = calloc(o.nfiles, sizeof *all), **by_rank = NULL;
    int code = im && all ? read_profiles(&o, im) : EXIT_RUNTIME;
    for (size_t i = 0; !code && i < o.nfiles; i++) {
        all[i] = &im[i].t;
        if (*im[i].warnings) fprintf(stderr, "%s", im[i].warnings);
    }
    if (!code) code = check_all(all, o.nfiles, &by_rank);
    if (!code) code = prepare_dir(&o);
    if (!code) code = write_all(&o, im);
    if (!code) code = verify(&o, im);
    for (size_t i = 0; im && i < o.nfiles; i++) replay_import_free(&im[i]);
    free(im), free(all), free(by_rank);
    return code;
}

/* ---- show ---- */

static int do_show(int argc, char **argv)
{
    static trace_opts o;
    char err[2048], **paths = NULL;
    size_t n = 0;
    int rc = parse_sub("show", show_table, BENCH_OPT_COUNT(show_table), argc, argv, &o);
    if (rc) return rc == BENCH_OPT_HELP ? 0 : rc;
    if (!o.nfiles) return fprintf(stderr, TRACE_PREFIX " show: no trace given\n"), EXIT_USAGE;
    struct stat st;
    if (o.nfiles == 1 && stat(o.files[0], &st) == 0 && S_ISDIR(st.st_mode)) {
        if (replay_rank_files(o.files[0], &paths, &n, err, sizeof err))
            return fprintf(stderr, TRACE_PREFIX ": %s\n", err), EXIT_USAGE;
        if (!n)
            return fprintf(stderr, TRACE_PREFIX ": %s holds no rank<R>.jsonl trace\n", o.files[0]),
                   EXIT_USAGE;
    } else {
        if (!(paths = calloc(o.nfiles, sizeof *paths))) return EXIT_RUNTIME;
        for (n = 0; n < o.nfiles; n++)
            if (!(paths[n] = strdup(o.files[n]))) return EXIT_RUNTIME;
    }
    replay_trace *t = calloc(n, sizeof *t), **all = calloc(n, sizeof *all), **by_rank = NULL;
    int code = t && all ? 0 : EXIT_RUNTIME;
    for (size_t i = 0; !code && i < n; i++) {
        int no_json = 0;
        all[i] = &t[i];
        if (replay_trace_read(paths[i], REPLAY_TRACE_MAX_BYTES, all[i], &no_json, err, sizeof err))
            code = no_json ? EXIT_UNAVAILABLE : EXIT_USAGE,
            fprintf(stderr, TRACE_PREFIX ": %s\n", err);
    }
    if (!code) code = check_all(all, n, &by_rank);
    if (!code) replay_trace_summary(stdout, by_rank, all[0]->world);
    for (size_t i = 0; t && i < n; i++) replay_trace_free(&t[i]);
    free(t), free(all), free(by_rank);
    replay_rank_files_free(paths, n);
    return code;
}

int cmd_trace(int argc, char **argv)
{
    if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
        usage(argc < 2 ? stderr : stdout);
        return argc < 2 ? EXIT_USAGE : 0;
    }
    if (!strcmp(argv[1], "import")) return do_import(argc - 1, argv + 1);
    if (!strcmp(argv[1], "show")) return do_show(argc - 1, argv + 1);
    fprintf(stderr, TRACE_PREFIX ": unknown subcommand '%.60s' (import, show)\n", argv[1]);
    return EXIT_USAGE;
}
