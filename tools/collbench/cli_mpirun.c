/* Launching through mpirun (see cli_mpirun.h). */
#include "cli_mpirun.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "core/dir_remove.h"
#include "core/errbuf.h"
#ifdef COLL_HAVE_MPI
#include <mpi.h>
#endif

#if defined(COLL_HAVE_MPI) && !defined(OPEN_MPI)
#define MPIRUN_IS_OPEN_MPI 0
static const char *const default_mpiruns[] = {"mpiexec.mpich", "mpiexec", "mpirun", NULL};
#else
#define MPIRUN_IS_OPEN_MPI 1
static const char *const default_mpiruns[] = {"mpirun.openmpi", "mpirun", NULL};
#endif

extern char **environ;

static int executable(const char *path) { return access(path, X_OK) == 0; }

/* name with a '/' as it is, else the first match in PATH. */
static int lookup(const char *name, char *path, size_t len)
{
    if (strchr(name, '/')) {
        snprintf(path, len, "%s", name);
        return executable(path);
    }
    const char *p = getenv("PATH");
    if (!p) p = "/usr/bin:/bin";
    while (*p) {
        size_t n = strcspn(p, ":");
        snprintf(path, len, "%.*s/%s", (int)n, n ? p : ".", name);
        if (executable(path)) return 1;
        p += n + (p[n] == ':');
    }
    return 0;
}

int cli_mpirun_find(char *path, size_t len, char *why, size_t whylen)
{
    const char *asked = getenv(CLI_ENV_MPIRUN);
    if (asked && *asked) {
        if (lookup(asked, path, len)) return 0;
        coll__set_err(why, whylen, "%s=%s is not an executable program", CLI_ENV_MPIRUN, asked);
        return -1;
    }
    for (const char *const *n = default_mpiruns; *n; n++)
        if (lookup(*n, path, len)) return 0;
    snprintf(why, whylen, "mpirun not found in PATH: install %s (scripts/deps.sh) or set %s",
             MPIRUN_IS_OPEN_MPI ? "openmpi-bin" : "mpich", CLI_ENV_MPIRUN);
    return -1;
}

/* ---- the mpirun command line and environment ---- */

typedef struct strv {
    char **v;
    size_t n, cap;
} strv;

static int push(strv *s, const char *str)
{
    if (s->n + 2 > s->cap) {
        size_t cap = s->cap ? 2 * s->cap : 32;
        char **v = realloc(s->v, cap * sizeof *v);
        if (!v) return -1;
        s->v = v;
        s->cap = cap;
    }
    if (!(s->v[s->n] = strdup(str))) return -1;
    s->v[++s->n] = NULL;
    return 0;
}

static void strv_free(strv *s)
{
    for (size_t i = 0; i < s->n; i++) free(s->v[i]);
    free(s->v);
}

__attribute__((format(printf, 2, 3))) static int pushf(strv *s, const char *fmt, ...)
{
    char buf[4200];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    return push(s, buf);
}

/* Variables the launch sets or must not pass on: a stale MASTER_PORT or token
 * would beat the rendezvous through MPI. */
static int dropped(const char *entry)
{
    static const char *const names[] = {CLI_ENV_BACKEND,      "COLLBENCH_NPROCS",
                                        CLI_ENV_RESULTS_FIFO, "MASTER_ADDR",
                                        "MASTER_PORT",        COLL_ENV_JOB_TOKEN,
                                        COLL_ENV_STORE_FD,    COLL_ENV_RESULTS_FD,
                                        COLL_ENV_LAUNCHED,    NULL};
    for (const char *const *n = names; *n; n++) {
        size_t len = strlen(*n);
        if (strncmp(entry, *n, len) == 0 && entry[len] == '=') return 1;
    }
    return 0;
}

/* Open MPI's shared-memory transport (vader; sm from Open MPI 5) keeps a
 * backing file per rank in /dev/shm, left behind when a rank is killed or the
 * run interrupted: each launch gives it a directory of its own there, removed
 * with whatever is in it when mpirun is done (a user's own setting wins). */
static const char *const SHM_DIR_VARS[] = {"OMPI_MCA_btl_vader_backing_directory",
                                           "OMPI_MCA_btl_sm_backing_directory"};

#define SHM_DIR_PREFIX "collbench-mpi."

/* Directories of launchers that are gone (killed outright: nobody removed
 * theirs); only this user's, named by the launcher's pid. */
static void sweep_stale_shm_dirs(void)
{
    DIR *d = opendir("/dev/shm");
    if (!d) return;
    char path[300];
    for (struct dirent *e; (e = readdir(d));) {
        struct stat st;
        long pid = 0;
        if (strncmp(e->d_name, SHM_DIR_PREFIX, strlen(SHM_DIR_PREFIX)) != 0 ||
            sscanf(e->d_name + strlen(SHM_DIR_PREFIX), "%ld.", &pid) != 1 || pid <= 0)
            continue;
        snprintf(path, sizeof path, "/dev/shm/%s", e->d_name);
        if (lstat(path, &st) == 0 && S_ISDIR(st.st_mode) && st.st_uid == getuid() &&
            kill((pid_t)pid, 0) != 0 && errno == ESRCH)
            coll__remove_flat_dir(path);
    }
    closedir(d);
}

static int make_shm_dir(char *dir, size_t len)
{
    for (size_t i = 0; i < sizeof SHM_DIR_VARS / sizeof *SHM_DIR_VARS; i++)
        if (getenv(SHM_DIR_VARS[i])) return -1;
    if (!MPIRUN_IS_OPEN_MPI) return -1;
    sweep_stale_shm_dirs();
    snprintf(dir, len, "/dev/shm/" SHM_DIR_PREFIX "%ld.XXXXXX", (long)getpid());
    return mkdtemp(dir) ? 0 : -1;
}


static int build_env(strv *env, const char *backend, int nprocs, const char *fifo,
                     const char *shm_dir)
{
    int rc = 0;
    for (char **e = environ; *e && !rc; e++)
        if (!dropped(*e)) rc = push(env, *e);
    rc = rc || pushf(env, CLI_ENV_BACKEND "=%s", backend);
    rc = rc || pushf(env, "COLLBENCH_NPROCS=%d", nprocs);
    rc = rc || pushf(env, CLI_ENV_RESULTS_FIFO "=%s", fifo);
    for (size_t i = 0; shm_dir && i < sizeof SHM_DIR_VARS / sizeof *SHM_DIR_VARS; i++)
        rc = rc || pushf(env, "%s=%s", SHM_DIR_VARS[i], shm_dir);
    /* More ranks than cores: Open MPI must yield while it polls, or ranks
     * waiting in a collective take the cores from those doing the work. */
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    if (MPIRUN_IS_OPEN_MPI && nprocs > cores && !getenv("OMPI_MCA_mpi_yield_when_idle"))
        rc = rc || push(env, "OMPI_MCA_mpi_yield_when_idle=1");
    return rc;
}

static int build_argv(strv *av, const char *mpirun, const cli_launch *l, int nprocs)
{
    char exe[4096];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0) return -1;
    exe[n] = '\0';
    int rc = push(av, mpirun);
    rc = rc || push(av, MPIRUN_IS_OPEN_MPI ? "-np" : "-n");
    rc = rc || pushf(av, "%d", nprocs);
    if (MPIRUN_IS_OPEN_MPI) {
        rc = rc || push(av, "--oversubscribe");
        if (geteuid() == 0) rc = rc || push(av, "--allow-run-as-root");
        /* local ranks inherit the environment; -x carries it to other hosts */
        const char *vars[] = {CLI_ENV_BACKEND, "COLLBENCH_NPROCS", CLI_ENV_RESULTS_FIFO};
        for (size_t i = 0; i < 3; i++) rc = rc || push(av, "-x") || push(av, vars[i]);
    }
    const char *extra = getenv(CLI_ENV_MPIRUN_ARGS);
    char *copy = extra ? strdup(extra) : NULL, *save = NULL;
    for (char *t = copy ? strtok_r(copy, " \t\n", &save) : NULL; t;
         t = strtok_r(NULL, " \t\n", &save))
        rc = rc || push(av, t);
    free(copy);
    rc = rc || push(av, exe);
    for (int i = 0; i < l->argc; i++) rc = rc || push(av, l->argv[i]);
    return rc;
}

/* ---- running it ---- */

static volatile sig_atomic_t interrupted;
static volatile pid_t child;

static void forward(int sig)
{
    interrupted = sig;
    if (child > 0) kill(child, sig);
}

static size_t lines_seen; /* from rank 0 in this launch: none means no rank ran */

static void deliver(const cli_launch *l, const char *line)
{
    lines_seen++;
    if (l->on_result_line) l->on_result_line(line, l->arg);
}

/* Lines from rank 0, whole ones to the callback; *len keeps a partial one. */
static int read_lines(int fd, char *buf, size_t cap, size_t *len, const cli_launch *l)
{
    ssize_t n = read(fd, buf + *len, cap - 1 - *len);
    if (n <= 0) return (int)n;
    *len += (size_t)n;
    char *start = buf, *nl;
    while ((nl = memchr(start, '\n', (size_t)(buf + *len - start)))) {
        *nl = '\0';
        deliver(l, start);
        start = nl + 1;
    }
    *len = (size_t)(buf + *len - start);
    memmove(buf, start, *len);
    if (*len == cap - 1) { /* a line longer than the buffer: deliver what there is */
        buf[*len] = '\0';
        deliver(l, buf);
        *len = 0;
    }
    return (int)n;
}

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* Runs mpirun, feeding rank 0's lines to the callback; returns its wait status,
 * or -1 with errno. */
static int run_mpirun(char **argv, char **envp, int rfd, int keep_wfd, const cli_launch *l)
{
    struct sigaction sa = {.sa_handler = forward}, old_int, old_term;
    sigemptyset(&sa.sa_mask);
    interrupted = 0;
    lines_seen = 0;
    pid_t self = getpid(), pid = fork();
    if (pid < 0) return -1;
    if (pid == 0) {
        /* A launcher killed outright must not leave mpirun and its ranks
         * running: mpirun then ends them as on Ctrl-C. */
        if (prctl(PR_SET_PDEATHSIG, SIGTERM) != 0 || getppid() != self) _exit(126);
        execve(argv[0], argv, envp);
        _exit(127);
    }
    child = pid;
    sigaction(SIGINT, &sa, &old_int);
    sigaction(SIGTERM, &sa, &old_term);
    char buf[4096];
    size_t len = 0;
    int status = 0, exited = 0;
    double drain_until = 0;
    for (;;) {
        struct pollfd p = {.fd = rfd, .events = POLLIN};
        int got = poll(&p, 1, 50) > 0 ? read_lines(rfd, buf, sizeof buf, &len, l) : -1;
        if (!exited) {
            if (waitpid(pid, &status, WNOHANG) == pid) {
                exited = 1;
                child = 0;       /* reaped: its pid may be another process's soon */
                close(keep_wfd); /* from now on EOF comes once rank 0 has closed it too */
                drain_until = now_s() + 2;
            }
            continue;
        }
        if (got == 0 || (got < 0 && now_s() > drain_until)) break;
    }
    if (len > 0) { /* a last line without '\n' */
        buf[len] = '\0';
        deliver(l, buf);
    }
    child = 0;
    sigaction(SIGINT, &old_int, NULL);
    sigaction(SIGTERM, &old_term, NULL);
    return status;
}

/* A fresh directory holding the results FIFO; 0 or -1 with why. */
static int make_fifo(char *dir, size_t dlen, char *fifo, size_t flen, char *why, size_t wlen)
{
    const char *tmp = getenv("TMPDIR");
    snprintf(dir, dlen, "%s/collbench-mpirun.XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(dir)) return coll__set_err(why, wlen, "mkdtemp %s: %s", dir, strerror(errno)), -1;
    snprintf(fifo, flen, "%s/results", dir);
    if (mkfifo(fifo, 0600) != 0) {
        coll__set_err(why, wlen, "mkfifo %s: %s", fifo, strerror(errno));
        rmdir(dir);
        return -1;
    }
    return 0;
}

int cli_mpirun_launch_one(const cli_launch *l, const char *backend, int nprocs)
{
    char mpirun[4096], why[512], dir[4096], fifo[4200], what[96] = "";
    if (l->what) snprintf(what, sizeof what, "%s ", l->what);
    if (cli_mpirun_find(mpirun, sizeof mpirun, why, sizeof why) != 0) {
        cli_launch_note(l, 0, why);
        return fprintf(stderr, "%s: --backend %s: %s\n", l->prefix, backend, why), EXIT_UNAVAILABLE;
    }
    if (make_fifo(dir, sizeof dir, fifo, sizeof fifo, why, sizeof why) != 0) {
        cli_launch_note(l, 0, why);
        return fprintf(stderr, "%s: %s%s %d ranks: %s\n", l->prefix, what, backend, nprocs, why),
               EXIT_RUNTIME;
    }

    strv av = {0}, env = {0};
    int code = EXIT_RUNTIME, st = -1;
    char shm_dir[64];
    int have_shm_dir = make_shm_dir(shm_dir, sizeof shm_dir) == 0;
    /* Our own write end keeps the FIFO open until mpirun is done, so that reads
     * block for data instead of seeing EOF before rank 0 has opened it. */
    int rfd = open(fifo, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    int wfd = rfd >= 0 ? open(fifo, O_WRONLY | O_CLOEXEC) : -1;
    why[0] = '\0';
    if (wfd < 0) {
        coll__set_err(why, sizeof why, "open %s: %s", fifo, strerror(errno));
        fprintf(stderr, "%s: %s%s %d ranks: %s\n", l->prefix, what, backend, nprocs, why);
    } else if (build_argv(&av, mpirun, l, nprocs) ||
               build_env(&env, backend, nprocs, fifo, have_shm_dir ? shm_dir : NULL)) {
        coll__set_err(why, sizeof why, "out of memory building the mpirun command");
        fprintf(stderr, "%s: %s\n", l->prefix, why);
        close(wfd);
    } else {
        fflush(stdout);
        st = run_mpirun(av.v, env.v, rfd, wfd, l);
        if (st < 0) {
            coll__set_err(why, sizeof why, "cannot run %s: %s", mpirun, strerror(errno));
            fprintf(stderr, "%s: %s%s %d ranks: %s\n", l->prefix, what, backend, nprocs, why);
            close(wfd);
        }
    }
    int quiet = l->report != NULL; /* the caller says how the ranks did */
    if (st < 0) {
        cli_launch_note(l, 0, why);
    } else if (interrupted) {
        /* the words of the local launcher's verdict (launcher.c), so that an
         * interrupted run reads alike on every backend */
        code = EXIT_SIGNALLED + interrupted;
        coll__set_err(why, sizeof why, "interrupted by signal %d (%s), forwarded to the ranks",
                      (int)interrupted, strsignal(interrupted));
        cli_launch_note(l, 1, why);
        if (!quiet)
            fprintf(stderr, "%s: %s%s %d ranks failed: %s\n", l->prefix, what, backend, nprocs,
                    why);
    } else if (WIFEXITED(st) && WEXITSTATUS(st) == 127) {
        coll__set_err(why, sizeof why, "cannot execute %s", mpirun);
        cli_launch_note(l, 0, why);
        fprintf(stderr, "%s: %s%s %d ranks: %s\n", l->prefix, what, backend, nprocs, why);
    } else if (WIFSIGNALED(st)) {
        coll__set_err(why, sizeof why, "%s killed by signal %d", mpirun, WTERMSIG(st));
        cli_launch_note(l, 1, why);
        if (!quiet)
            fprintf(stderr, "%s: %s%s %d ranks failed: %s\n", l->prefix, what, backend, nprocs,
                    why);
    } else if ((code = WEXITSTATUS(st)) != 0) {
        coll__set_err(why, sizeof why, "mpirun exited with %d", code);
        cli_launch_note(l, 1, why);
        if (l->exit_wrong && code == l->exit_wrong && lines_seen == 0) {
            /* mpirun's own failures exit 1 too; wrong results come with rows */
            if (!quiet)
                fprintf(stderr,
                        "%s: %s%s %d ranks failed: mpirun exited with %d before any "
                        "result came back\n",
                        l->prefix, what, backend, nprocs, code);
            code = EXIT_RUNTIME;
        } else if (quiet) {
        } else if (l->exit_wrong && code == l->exit_wrong) {
            fprintf(stderr, "%s: %s%s %d ranks: wrong results (mpirun exited with %d)\n", l->prefix,
                    what, backend, nprocs, code);
        } else {
            fprintf(stderr, "%s: %s%s %d ranks failed: mpirun exited with %d\n", l->prefix, what,
                    backend, nprocs, code);
        }
    } else {
        cli_launch_note(l, 1, "");
    }
    if (rfd >= 0) close(rfd);
    unlink(fifo);
    rmdir(dir);
    if (have_shm_dir) coll__remove_flat_dir(shm_dir);
    strv_free(&av);
    strv_free(&env);
    return code;
}

void cli_mpirun_rank_setup(const coll_launch_env *env)
{
    const char *fifo = getenv(CLI_ENV_RESULTS_FIFO);
    if (!fifo || !*fifo || !env->source || strcmp(env->source, "collbench") == 0 ||
        strcmp(env->source, "torchrun") == 0)
        return;
    unsetenv(COLL_ENV_RESULTS_FD);
    if (env->rank != 0) return;
    /* O_NONBLOCK: fail rather than wait forever when no launcher reads it */
    int fd = open(fifo, O_WRONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) {
        fprintf(stderr,
                "collbench: rank 0: cannot open the launcher's results FIFO %s (%s): "
                "writing --csv/--json here instead\n",
                fifo, strerror(errno));
        return;
    }
    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
    char v[32];
    snprintf(v, sizeof v, "%d", fd);
    setenv(COLL_ENV_RESULTS_FD, v, 1);
}
