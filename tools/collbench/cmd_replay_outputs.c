/* collbench replay's --csv and -J checked before anything runs, and the
 * private directory its rows go to: by the launcher, or by rank 0 under
 * another launcher (cmd_replay_rank.c). */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cmd_replay.h"
#include "exit_codes.h"

/* An output must be a file we can create or replace, refused before the run. */
static int check_output(const char *flag, const char *path)
{
    char dir[PATH_MAX];
    struct stat st;
    if (!path) return 0;
    if (!*path)
        return fprintf(stderr, REPLAY_PREFIX ": %s: an empty file name\n", flag), EXIT_USAGE;
    if (stat(path, &st) == 0 && S_ISDIR(st.st_mode))
        return fprintf(stderr, REPLAY_PREFIX ": %s %s: a directory\n", flag, path), EXIT_USAGE;
    snprintf(dir, sizeof dir, "%s", path);
    char *slash = strrchr(dir, '/');
    if (!slash) snprintf(dir, sizeof dir, ".");
    else if (slash == dir) dir[1] = '\0';
    else *slash = '\0';
    if (access(dir, W_OK) != 0)
        return fprintf(stderr, REPLAY_PREFIX ": %s %s: cannot write in %s: %s\n", flag, path, dir,
                       strerror(errno)),
               EXIT_USAGE;
    return 0;
}

int cmd_replay_check_outputs(const replay_cli *o)
{
#ifndef COLL_HAVE_JANSSON
    if (o->csv_path || o->json_path)
        return fprintf(stderr, REPLAY_PREFIX ": result files need jansson (apt-get install "
                                             "libjansson-dev)\n"),
               EXIT_UNAVAILABLE;
#endif
    int code = check_output("--csv", o->csv_path);
    return code ? code : check_output("-J", o->json_path);
}

int cmd_replay_make_dir(char *dir, size_t len)
{
    const char *tmp = getenv("TMPDIR");
    snprintf(dir, len, "%s/collbench-replay.XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (mkdtemp(dir)) return 0;
    fprintf(stderr, REPLAY_PREFIX ": %s: %s\n", dir, strerror(errno));
    dir[0] = '\0';
    return EXIT_RUNTIME;
}
