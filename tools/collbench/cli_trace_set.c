/* Reading a program's trace for the commands (cli_trace_set.h). */
#include "cli_trace_set.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "replay/trace_files.h"
#include "exit_codes.h"

static int add_path(cli_trace_set *s, const char *path)
{
    if (s->n == s->cap) {
        size_t cap = s->cap ? 2 * s->cap : 16;
        char **p = realloc(s->paths, cap * sizeof *p);
        if (!p) return -1;
        s->paths = p, s->cap = cap;
    }
    return (s->paths[s->n++] = strdup(path)) ? 0 : -1;
}

/* A directory's rank<R>.jsonl files (in rank order), or the file itself. */
static int collect(const char *prefix, const char *arg, cli_trace_set *s)
{
    struct stat st;
    char err[PATH_MAX + 64], **paths;
    size_t n, i;
    if (stat(arg, &st) != 0)
        return fprintf(stderr, "%s: %s: %s\n", prefix, arg, strerror(errno)), EXIT_USAGE;
    if (!S_ISDIR(st.st_mode)) return add_path(s, arg) ? EXIT_RUNTIME : 0;
    if (replay_rank_files(arg, &paths, &n, err, sizeof err))
        return fprintf(stderr, "%s: %s\n", prefix, err), EXIT_USAGE;
    for (i = 0; i < n && add_path(s, paths[i]) == 0; i++) {
    }
    replay_rank_files_free(paths, n);
    if (i < n) return EXIT_RUNTIME;
    if (n == 0)
        return fprintf(stderr, "%s: %s holds no rank<R>.jsonl trace\n", prefix, arg), EXIT_USAGE;
    return 0;
}

void cli_trace_set_free(cli_trace_set *s)
{
    for (size_t i = 0; i < s->n; i++) {
        if (s->traces) replay_trace_free(&s->traces[i]);
        free(s->paths[i]);
    }
    free(s->traces);
    free(s->paths);
    free(s->by_rank);
    memset(s, 0, sizeof *s);
}

int cli_trace_set_load(const char *prefix, const char *const *args, size_t nargs, int whole,
                       cli_trace_set *s)
{
    char err[2048];
    int code = 0;
    memset(s, 0, sizeof *s);
    if (nargs == 0)
        return fprintf(stderr,
                       "%s: no trace given (a directory of rank<R>.jsonl files, or the files)\n",
                       prefix),
               EXIT_USAGE;
    for (size_t i = 0; i < nargs && !code; i++) code = collect(prefix, args[i], s);
    if (code) return code;
    s->traces = calloc(s->n, sizeof *s->traces);
    replay_trace **all = calloc(s->n, sizeof *all);
    if (!s->traces || !all) return free(all), EXIT_RUNTIME;
    for (size_t i = 0; i < s->n && !code; i++) {
        int no_json = 0;
        all[i] = &s->traces[i];
        if (replay_trace_read(s->paths[i], REPLAY_TRACE_MAX_BYTES, all[i], &no_json, err,
                              sizeof err) == 0)
            continue;
        fprintf(stderr, "%s: %s\n", prefix, err);
        code = no_json ? EXIT_UNAVAILABLE : EXIT_USAGE;
    }
    if (!code) s->world = s->traces[0].world;
    if (!code && whole && !(s->by_rank = calloc((size_t)s->world, sizeof *s->by_rank)))
        code = EXIT_RUNTIME;
    if (!code && whole && replay_trace_check(all, s->n, s->by_rank, err, sizeof err))
        code = EXIT_USAGE, fprintf(stderr, "%s: the traces disagree: %s\n", prefix, err);
    free(all);
    return code;
}
