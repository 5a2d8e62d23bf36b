/* One step as a subprocess: its stdout (tables) into the suite's log, its
 * stderr into the log and, line by line, onto our stderr above the progress
 * line; a watchdog for a step that hangs. Waiting is poll() with a timeout,
 * which also paces the progress display. */
#include "suite.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/clock.h"
#include "exit_codes.h"

#define POLL_MS 250
#define KILL_GRACE_S 10.0 /* after SIGTERM, before SIGKILL */
#define DRAIN_GRACE_S 2.0 /* the step exited but something still holds its pipes */

typedef struct child_io {
    int fd[2];       /* stdout, stderr read ends; -1 once at EOF */
    char line[1024]; /* stderr's partial line */
    size_t len;
} child_io;

static void stderr_line(suite_step *st, FILE *log, suite_progress *p, char *line)
{
    char shown[1100];
    fprintf(log, "%s\n", line);
    snprintf(shown, sizeof shown, "  %s", line);
    suite_progress_print(p, shown);
    if (*line) snprintf(st->note, sizeof st->note, "%.*s", (int)sizeof st->note - 1, line);
}

static void take_stderr(child_io *io, suite_step *st, FILE *log, suite_progress *p, const char *buf,
                        size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (buf[i] == '\n' || io->len == sizeof io->line - 1) {
            io->line[io->len] = '\0';
            stderr_line(st, log, p, io->line);
            io->len = 0;
            if (buf[i] == '\n') continue;
        }
        if (buf[i] != '\r') io->line[io->len++] = buf[i];
    }
}

/* Reads what is there on fd k; closes it at EOF. */
static void drain(child_io *io, int k, suite_step *st, FILE *log, suite_progress *p)
{
    char buf[4096];
    ssize_t n = read(io->fd[k], buf, sizeof buf);
    if (n < 0 && (errno == EINTR || errno == EAGAIN)) return;
    if (n <= 0) {
        close(io->fd[k]);
        io->fd[k] = -1;
        if (k == 1 && io->len) take_stderr(io, st, log, p, "\n", 1);
        return;
    }
    if (k == 0) fwrite(buf, 1, (size_t)n, log);
    else take_stderr(io, st, log, p, buf, (size_t)n);
}

static pid_t spawn(suite_step *st, FILE *log, int out[2], int err[2])
{
    if (pipe2(out, O_CLOEXEC) != 0) return -1;
    if (pipe2(err, O_CLOEXEC) != 0) {
        close(out[0]);
        close(out[1]);
        return -1;
    }
    fflush(log);
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    if (pid == 0) {
        dup2(out[1], STDOUT_FILENO);
        dup2(err[1], STDERR_FILENO);
        execvp(st->argv[0], st->argv);
        dprintf(STDERR_FILENO, "collbench suite: cannot run %s: %s\n", st->argv[0],
                strerror(errno));
        _exit(127);
    }
    close(out[1]);
    close(err[1]);
    if (pid < 0) {
        close(out[0]);
        close(err[0]);
    }
    return pid;
}

/* SIGTERM once (our launcher and mpirun pass it on to the ranks), SIGKILL later. */
static void stop_child(pid_t pid, double now, double *term_at)
{
    if (*term_at == 0) {
        kill(pid, SIGTERM);
        *term_at = now;
    } else if (now - *term_at > KILL_GRACE_S) {
        kill(pid, SIGKILL);
    }
}

static int exit_code_of(int status)
{
    if (WIFEXITED(status)) return WEXITSTATUS(status);
    if (WIFSIGNALED(status)) return EXIT_SIGNALLED + WTERMSIG(status);
    return EXIT_RUNTIME;
}

void suite_exec(suite_step *st, FILE *log, suite_progress *p, double limit_s,
                volatile sig_atomic_t *interrupted)
{
    int out[2], err[2], status = 0, reaped = 0;
    double t0 = coll__now_s(), term_at = 0, reaped_at = 0;
    child_io io = {.fd = {-1, -1}};
    st->note[0] = '\0';
    st->timed_out = 0;
    pid_t pid = spawn(st, log, out, err);
    if (pid < 0) {
        snprintf(st->note, sizeof st->note, "cannot start %s: %s", st->argv[0], strerror(errno));
        st->code = 3;
        st->seconds = 0;
        return;
    }
    io.fd[0] = out[0];
    io.fd[1] = err[0];
    while (io.fd[0] >= 0 || io.fd[1] >= 0) {
        struct pollfd pf[2] = {{.fd = io.fd[0], .events = POLLIN},
                               {.fd = io.fd[1], .events = POLLIN}};
        int n = poll(pf, 2, POLL_MS);
        for (int k = 0; n > 0 && k < 2; k++)
            if (io.fd[k] >= 0 && (pf[k].revents & (POLLIN | POLLHUP | POLLERR)))
                drain(&io, k, st, log, p);
        double now = coll__now_s();
        if (!reaped && waitpid(pid, &status, WNOHANG) == pid) reaped = 1, reaped_at = now;
        if (reaped && now - reaped_at > DRAIN_GRACE_S) break;
        if (!reaped && (*interrupted || (limit_s > 0 && now - t0 > limit_s))) {
            if (term_at == 0 && !*interrupted) st->timed_out = limit_s;
            stop_child(pid, now, &term_at);
        }
        suite_progress_tick(p);
    }
    for (int k = 0; k < 2; k++)
        if (io.fd[k] >= 0) close(io.fd[k]);
    while (!reaped && waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    st->code = exit_code_of(status);
    if (term_at > 0 && st->code == 0) st->code = 3;
    st->seconds = coll__now_s() - t0;
    fflush(log);
}
