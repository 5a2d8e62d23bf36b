/* collbench replay's --csv, -J and --calls checked before anything runs, the
 * private directory its rows go to (by the launcher, or by rank 0 under
 * another launcher: cmd_replay_rank.c), and the files written from it. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/atomic_file.h"
#include "replay/replay_calls.h"
#include "replay/replay_output.h"
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
    if (!code) code = check_output("-J", o->json_path);
    return code ? code : check_output("--calls", o->calls_path);
}

int cmd_replay_writes(const replay_cli *o) { return o->csv_path || o->json_path || o->calls_path; }

/* --calls: the header, then what the ranks' rank 0 appended turn by turn. */
static int write_calls(const char *dir, const char *path, char *err, size_t errlen)
{
    char from[PATH_MAX + 32];
    snprintf(from, sizeof from, "%s/" REPLAY_CALLS_FILE, dir);
    FILE *in = fopen(from, "r"), *out = NULL;
    char *text = NULL;
    size_t len = 0;
    int ok = (out = open_memstream(&text, &len)) != NULL;
    if (ok) fputs(REPLAY_CALLS_HEADER "\n", out);
    char buf[1 << 16];
    size_t n;
    while (ok && in && (n = fread(buf, 1, sizeof buf, in)) > 0) ok = fwrite(buf, 1, n, out) == n;
    if (in && ferror(in)) ok = 0;
    if (in) fclose(in);
    if (out && fclose(out)) ok = 0;
    int rc = ok ? coll__file_write_atomic(path, text, len, err, errlen)
                : (snprintf(err, errlen, "--calls: reading %.900s failed", from), -1);
    free(text);
    return rc;
}

int cmd_replay_write_outputs(const replay_cli *o, const char *dir)
{
    char rows[PATH_MAX + 32], err[1024];
    snprintf(rows, sizeof rows, "%s/" REPLAY_ROWS_FILE, dir);
    int rc = (o->csv_path || o->json_path) &&
             replay_output_write(rows, o->csv_path, o->json_path, err, sizeof err);
    if (!rc && o->calls_path) rc = write_calls(dir, o->calls_path, err, sizeof err);
    if (rc) fprintf(stderr, REPLAY_PREFIX ": %s\n", err);
    return rc ? EXIT_RUNTIME : 0;
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
