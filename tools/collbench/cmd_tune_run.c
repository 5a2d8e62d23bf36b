/* One arm of one group as a child collbench: see cmd_tune.h. */
#include "cmd_tune.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "coll_tool.h"
#include "core/clock.h"
#include "core/tuning.h"

#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif
#define TERM_GRACE_S 5.0 /* the child's launcher stops its ranks on SIGTERM in about 1 s */

/* The child's environment: only the arm's variable, no tuning file (the
 * defaults are what an arm is measured against). */
static void child_env(const tune_run_opts *o, const tune_decision *d, int arm)
{
    const struct coll__tunable *t;
    for (size_t i = 0; (t = coll_tuning_row(i)) != NULL; i++) unsetenv(t->name);
    char none[1024];
    snprintf(none, sizeof none, "%s/no-tuning-file", o->workdir);
    setenv("COLL_TUNING_FILE", none, 1);
    unsetenv("COLL__TUNING_QUIET");
    if (d->arms[arm]) setenv(d->knob, d->arms[arm], 1);
}

/* The last lines of the child's log, for a failure's message. */
static void log_tail(const char *path, char *buf, size_t len)
{
    buf[0] = 0;
    FILE *f = fopen(path, "r");
    if (!f) return;
    char all[8192];
    size_t n = fread(all, 1, sizeof all - 1, f);
    fclose(f);
    all[n] = 0;
    const char *p = all + n;
    for (int lines = 0; p > all && lines < 4; p--)
        if (p[-1] == '\n' && p != all + n) lines++;
    snprintf(buf, len, "%s", p);
}

/* p50 per size from the child's CSV. */
static int read_csv(const char *path, const tune_decision *d, double *us, char *why, size_t whylen)
{
    FILE *f = fopen(path, "r");
    if (!f) return snprintf(why, whylen, "%s: %s", path, strerror(errno)), -1;
    char line[8192];
    int cb = -1, cp = -1, cw = -1, rc = 0;
    for (int lineno = 0; fgets(line, sizeof line, f); lineno++) {
        char *save = NULL, *tok = strtok_r(line, ",\n", &save);
        uint64_t bytes = 0;
        double p50 = 0;
        for (int col = 0; tok; col++, tok = strtok_r(NULL, ",\n", &save)) {
            if (lineno == 0) {
                if (strcmp(tok, "bytes") == 0) cb = col;
                if (strcmp(tok, "time_us_p50") == 0) cp = col;
                if (strcmp(tok, "wrong") == 0) cw = col;
            } else if (col == cb) bytes = strtoull(tok, NULL, 10);
            else if (col == cp) p50 = strtod(tok, NULL);
            else if (col == cw && strcmp(tok, "0") != 0) rc = -1;
        }
        if (lineno == 0 && (cb < 0 || cp < 0 || cw < 0)) rc = -1;
        for (int s = 0; lineno > 0 && s < d->nsizes; s++)
            if (d->sizes[s] == bytes) us[s] = p50;
    }
    fclose(f);
    if (rc) snprintf(why, whylen, "%s: wrong results or not a result file", path);
    for (int s = 0; rc == 0 && s < d->nsizes; s++)
        if (!(us[s] > 0)) rc = -1, snprintf(why, whylen, "%s: no time for a size", path);
    return rc;
}

void cmd_tune_iters(const tune_run_opts *o, const tune_decision *d, int *iters, int *warmup)
{
    *iters = d->iters ? d->iters : o->iters;
    *warmup = d->warmup ? d->warmup : o->warmup;
}

/* Waits for pid until deadline (0: none): 0 when it exited by itself, 1 when
 * the deadline came first and it was stopped (SIGTERM, then SIGKILL after
 * TERM_GRACE_S). A pidfd lets poll() sleep until either; without one (kernel
 * before 5.3) the wait is plain and the child's own -T bounds it. */
static int wait_child(pid_t pid, double deadline, int *status)
{
    int fd = deadline > 0 ? (int)syscall(SYS_pidfd_open, pid, 0) : -1;
    int stopped = 0;
    for (double until = deadline; fd >= 0;) {
        double left = until - coll__now_s();
        struct pollfd pfd = {fd, POLLIN, 0};
        int r = left > 0 ? poll(&pfd, 1, (int)(left * 1000) + 1) : 0;
        if (r < 0 && errno == EINTR) continue; /* Ctrl-C: the child has it too */
        if (r != 0) break;                     /* exited (or poll failed: wait plainly) */
        kill(pid, stopped ? SIGKILL : SIGTERM);
        if (stopped++) break;
        until = coll__now_s() + TERM_GRACE_S;
    }
    if (fd >= 0) close(fd);
    while (waitpid(pid, status, 0) < 0 && errno == EINTR) {
    }
    return stopped > 0;
}

int cmd_tune_run(const tune_run_opts *o, const tune_decision *d, int arm, int group, double *us,
                 char *why, size_t whylen)
{
    char csv[1024], logp[1024], sizes[256] = "", procs[16], iters[16], warm[16], tmo[32];
    snprintf(csv, sizeof csv, "%s/run.csv", o->workdir);
    snprintf(logp, sizeof logp, "%s/run.log", o->workdir);
    unlink(csv); /* --csv appends */
    for (int s = 0; s < d->nsizes; s++) {
        size_t used = strlen(sizes);
        snprintf(sizes + used, sizeof sizes - used, "%s%llu", s ? "," : "",
                 (unsigned long long)d->sizes[s]);
    }
    snprintf(procs, sizeof procs, "%d", d->groups[group].ranks);
    int n, w;
    cmd_tune_iters(o, d, &n, &w);
    snprintf(iters, sizeof iters, "%d", n);
    snprintf(warm, sizeof warm, "%d", w);
    snprintf(tmo, sizeof tmo, "%g", o->timeout_s);
    char *argv[] = {(char *)o->exe,
                    "allreduce",
                    "-P",
                    procs,
                    "--backend",
                    (char *)(d->backend ? d->backend : "shm"),
                    "--bind",
                    "core",
                    "--buffers",
                    (char *)d->groups[group].buffers,
                    "--sizes",
                    sizes,
                    "--inplace",
                    (char *)(d->groups[group].out_of_place ? "0" : "1"),
                    "-d",
                    "float32",
                    "-o",
                    "sum",
                    "-n",
                    iters,
                    "-w",
                    warm,
                    "-c",
                    "1",
                    "-T",
                    tmo,
                    "-q",
                    "--csv",
                    csv,
                    NULL};
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    if (pid == 0) {
        int fd = open(logp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        if (fd >= 0) dup2(fd, STDOUT_FILENO), dup2(fd, STDERR_FILENO);
        child_env(o, d, arm);
        execv(o->exe, argv);
        dprintf(STDERR_FILENO, "cannot run %s: %s\n", o->exe, strerror(errno));
        _exit(127);
    }
    if (pid < 0) return snprintf(why, whylen, "fork: %s", strerror(errno)), -1;
    int status = 0;
    if (wait_child(pid, o->deadline, &status)) return 1;
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        char tail[1024];
        log_tail(logp, tail, sizeof tail);
        snprintf(why, whylen,
                 "%s=%s collbench allreduce -P %s --buffers %s --inplace %d --sizes %s: %s %d:\n%s",
                 d->knob, d->arms[arm] ? d->arms[arm] : "(default)", procs,
                 d->groups[group].buffers, !d->groups[group].out_of_place, sizes,
                 WIFEXITED(status) ? "exit" : "signal",
                 WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status), tail);
        return -1;
    }
    return read_csv(csv, d, us, why, whylen);
}
