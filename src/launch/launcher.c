/* Local launcher (see launcher.h): fork/exec the ranks, hand rank 0 the store's
 * listening socket and a results pipe, watch them, and stop everyone when one
 * fails. The wait loop blocks in poll() on the results pipe and a self-pipe fed
 * by the SIGCHLD/SIGINT/SIGTERM handlers, so it never spins. */
#include "launch/launcher.h"
#include "launch/launch_blame.h"
#include "coll_tool.h"
#include "core/clock.h"
#include "core/sock.h"
#include "core/token.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

/* After the first failure the others get this long to end on their own: a
 * survivor of a failed set-up may still be in a store wait of its own -T
 * (measured: up to 2.0 s after the first failure at -T 2), auto's and
 * gloo's look-ups of whom peers blamed take up to 0.5 s, and rank 0's store
 * keeps serving up to 1 s for the others' last reads. */
#define DEFAULT_GRACE_S 3.0
#define TERM_TO_KILL_S 1.0  /* SIGTERM, then SIGKILL this much later */
#define DRAIN_S 1.0         /* results pipe still open after every rank exited */
#define POLL_CAP_MS 100     /* backstop only: the self-pipe wakes the loop at once */
#define PEER_FAILURE_CODE 3 /* what a rank exits with when it saw a peer die */
#define STORE_BACKLOG 128
#define OWN_VAR_LEN 128 /* "COLL_JOB_TOKEN=" + 64 hex digits fits */
#define READ_CHUNK 32768

/* Variables the launcher defines; inherited values and extra_env never override them. */
enum {
    V_RANK,
    V_WORLD,
    V_LOCAL_RANK,
    V_LOCAL_WORLD,
    V_GROUP_RANK,
    V_ADDR,
    V_PORT,
    V_TOKEN,
    V_LAUNCHED,
    V_STORE_FD,
    V_RESULTS_FD,
    N_OWN_VARS
};
static const char *const own_var_names[N_OWN_VARS] = {
    "RANK",
    "WORLD_SIZE",
    "LOCAL_RANK",
    "LOCAL_WORLD_SIZE",
    "GROUP_RANK",
    "MASTER_ADDR",
    "MASTER_PORT",
    COLL_ENV_JOB_TOKEN,
    COLL_ENV_LAUNCHED,
    COLL_ENV_STORE_FD,
    COLL_ENV_RESULTS_FD,
};
/* Variables an outside launcher sets for its own ranks (torchrun users export
 * COLL_STORE_PORT): inherited, they would send our ranks to another port than
 * the socket rank 0 holds. Never passed on. */
static const char *const foreign_var_names[] = {"COLL_STORE_PORT", "TORCHELASTIC_USE_AGENT_STORE"};

typedef enum { STOP_NONE, STOP_GRACE, STOP_TERM, STOP_KILL } stop_phase;

typedef struct rank_proc {
    pid_t pid;
    int alive;
    int failed;       /* ended non-zero, by a signal, or its status was lost */
    int status, lost; /* waitpid's status; lost: reaped by someone else */
    int stopped;      /* the launcher signalled it (2: SIGKILL): its end says little */
    unsigned reaped;  /* reap order (1, 2, ...): the earlier of equals is named */
    int done;         /* wrote the done mark (opts->done_marks) */
    int blames;       /* the rank its blame mark named, -1: none */
    int early;        /* exited 0 without it while others ran: left them early */
} rank_proc;

typedef struct launcher {
    const coll__launch_opts *opts;
    coll__launch_result *res;
    int n;
    pid_t self;
    rank_proc *ranks;
    int nalive;
    int listen_fd, results_rd, results_wr, wake_rd, wake_wr;
    int port;
    char token[COLL_TOKEN_HEX_LEN + 1];
    const char *path;      /* program each rank execs */
    char **argv;           /* argv the ranks see */
    char **self_argv;      /* owned copy when argv[0] was NULL */
    const char **base_env; /* inherited + extra_env, shared by every rank */
    char *own_vars;        /* n * N_OWN_VARS strings of OWN_VAR_LEN bytes */
    char ***envp;          /* per rank */
    int failure_recorded;  /* a rank failed or an interrupt came: stopping */
    int interrupted_first; /* the interrupt, not a rank, is the verdict */
    unsigned nreaped;
    stop_phase phase;
    double phase_deadline, drain_deadline;
    int drain_killed;
    char *line; /* partial results line */
    size_t line_len, line_cap;
    int line_dropped; /* out of memory: skip to the next '\n' */
    int status;       /* COLL_ENOMEM when a results line was lost */
    int handlers_installed;
    int *bind_cpus; /* CPU of each rank ($COLL_BIND), -1: not pinned */
    struct sigaction old_chld, old_int, old_term, old_hup;
} launcher;

/* One launch at a time per process: the signal handlers are process-wide. */
static atomic_flag launch_busy = ATOMIC_FLAG_INIT;
static volatile sig_atomic_t wake_fd = -1;

static void on_signal(int sig)
{
    int saved = errno;
    unsigned char b = (unsigned char)sig;
    if (wake_fd >= 0) {
        ssize_t r = write(wake_fd, &b, 1); /* pipe full: a wakeup is pending anyway */
        (void)r;
    }
    errno = saved;
}

__attribute__((format(printf, 3, 4))) static int fail(launcher *l, int status, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(l->res->message, sizeof l->res->message, fmt, ap);
    va_end(ap);
    l->res->exit_code = PEER_FAILURE_CODE;
    return status;
}

static void close_fd(int *fd)
{
    if (*fd >= 0) close(*fd);
    *fd = -1;
}

/* ---- set-up: options, program, environment ---------------------------------------- */

static int check_opts(launcher *l)
{
    const coll__launch_opts *o = l->opts;
    if (o->nprocs < 1) return fail(l, COLL_EINVAL, "nprocs must be at least 1 (got %d)", o->nprocs);
    if (!o->argv) return fail(l, COLL_EINVAL, "argv is NULL: nothing to launch");
    for (const char *const *e = o->extra_env; e && *e; e++) {
        const char *eq = strchr(*e, '=');
        if (!eq || eq == *e)
            return fail(l, COLL_EINVAL, "extra_env entry \"%.100s\" is not NAME=VALUE", *e);
    }
    return COLL_OK;
}

static int choose_program(launcher *l)
{
    char *const *argv = l->opts->argv;
    if (argv[0] && !l->opts->use_self_exe) {
        l->path = argv[0];
        l->argv = (char **)argv;
        return COLL_OK;
    }
    l->path = "/proc/self/exe";
    if (argv[0]) {
        l->argv = (char **)argv;
        return COLL_OK;
    }
    /* argv[0] NULL: the arguments are argv[1..]; the rank sees our own name. */
    size_t n = 0;
    while (argv[n + 1]) n++;
    l->self_argv = calloc(n + 2, sizeof *l->self_argv);
    if (!l->self_argv) return fail(l, COLL_ENOMEM, "out of memory building argv");
    l->self_argv[0] = program_invocation_name;
    for (size_t i = 0; i < n; i++) l->self_argv[i + 1] = argv[i + 1];
    l->argv = l->self_argv;
    return COLL_OK;
}

/* Does "NAME=VALUE" entry carry the name that ends at the '=' of other (or at its NUL)? */
static int same_name(const char *entry, const char *other)
{
    size_t len = strcspn(other, "=");
    return strncmp(entry, other, len) == 0 && entry[len] == '=';
}

static int is_own_var(const char *entry)
{
    for (int i = 0; i < N_OWN_VARS; i++)
        if (same_name(entry, own_var_names[i])) return 1;
    for (size_t i = 0; i < sizeof foreign_var_names / sizeof foreign_var_names[0]; i++)
        if (same_name(entry, foreign_var_names[i])) return 1;
    return 0;
}

static int overridden_by_extra(const launcher *l, const char *entry)
{
    for (const char *const *e = l->opts->extra_env; e && *e; e++)
        if (same_name(entry, *e)) return 1;
    return 0;
}

static int build_base_env(launcher *l, size_t *count)
{
    size_t nenv = 0, nextra = 0;
    while (environ && environ[nenv]) nenv++;
    while (l->opts->extra_env && l->opts->extra_env[nextra]) nextra++;
    l->base_env = calloc(nenv + nextra + 1, sizeof *l->base_env);
    if (!l->base_env) return fail(l, COLL_ENOMEM, "out of memory building the environment");
    size_t n = 0;
    for (size_t i = 0; i < nenv; i++)
        if (!is_own_var(environ[i]) && !overridden_by_extra(l, environ[i]))
            l->base_env[n++] = environ[i];
    for (size_t i = 0; i < nextra; i++)
        if (!is_own_var(l->opts->extra_env[i])) l->base_env[n++] = l->opts->extra_env[i];
    *count = n;
    return COLL_OK;
}

static void format_own_vars(const launcher *l, int rank, char *vars)
{
#define OWN(i, spec, val) \
    snprintf(vars + (i)*OWN_VAR_LEN, OWN_VAR_LEN, "%s=" spec, own_var_names[i], val)
    OWN(V_RANK, "%d", rank);
    OWN(V_WORLD, "%d", l->n);
    OWN(V_LOCAL_RANK, "%d", rank);
    OWN(V_LOCAL_WORLD, "%d", l->n);
    OWN(V_GROUP_RANK, "%d", 0);
    OWN(V_ADDR, "%s", "127.0.0.1");
    OWN(V_PORT, "%d", l->port);
    OWN(V_TOKEN, "%s", l->token);
    OWN(V_LAUNCHED, "%s", "1");
    OWN(V_STORE_FD, "%d", l->listen_fd);
    OWN(V_RESULTS_FD, "%d", l->results_wr);
#undef OWN
}

/* Built before forking: a fork of a threaded process may not call malloc. */
static int build_envs(launcher *l)
{
    size_t nbase = 0;
    int rc = build_base_env(l, &nbase);
    if (rc) return rc;
    l->own_vars = calloc((size_t)l->n * N_OWN_VARS, OWN_VAR_LEN);
    l->envp = calloc((size_t)l->n, sizeof *l->envp);
    if (!l->own_vars || !l->envp)
        return fail(l, COLL_ENOMEM, "out of memory building the environment");
    for (int r = 0; r < l->n; r++) {
        char **env = calloc(nbase + N_OWN_VARS + 1, sizeof *env);
        if (!env) return fail(l, COLL_ENOMEM, "out of memory building the environment");
        l->envp[r] = env;
        memcpy(env, l->base_env, nbase * sizeof *env);
        char *vars = l->own_vars + (size_t)r * N_OWN_VARS * OWN_VAR_LEN;
        format_own_vars(l, r, vars);
        /* Only rank 0 gets the store socket and the results pipe (the others
         * the pipe too when they write done marks on it). */
        int nvars = r == 0 ? N_OWN_VARS : V_STORE_FD;
        for (int i = 0; i < nvars; i++) env[nbase + (size_t)i] = vars + (size_t)i * OWN_VAR_LEN;
        if (r != 0 && l->opts->done_marks)
            env[nbase + (size_t)nvars] = vars + (size_t)V_RESULTS_FD * OWN_VAR_LEN;
    }
    return COLL_OK;
}

static int open_channels(launcher *l)
{
    char err[200] = "";
    int wake[2], results[2];
    if (pipe2(wake, O_CLOEXEC | O_NONBLOCK) < 0)
        return fail(l, COLL_ESYS, "cannot create the launcher's signal pipe: %s", strerror(errno));
    l->wake_rd = wake[0];
    l->wake_wr = wake[1];
    if (pipe2(results, O_CLOEXEC) < 0)
        return fail(l, COLL_ESYS, "cannot create the results pipe: %s", strerror(errno));
    l->results_rd = results[0];
    l->results_wr = results[1];
    if (fcntl(l->results_rd, F_SETFL, O_NONBLOCK) < 0)
        return fail(l, COLL_ESYS, "cannot make the results pipe nonblocking: %s", strerror(errno));
    int fd = coll__sock_listen("127.0.0.1", 0, STORE_BACKLOG, err, sizeof err);
    if (fd < 0) return fail(l, fd, "cannot open the store's socket on 127.0.0.1: %s", err);
    l->listen_fd = fd;
    l->port = coll__sock_port(fd);
    if (l->port <= 0) return fail(l, COLL_ESYS, "cannot read the store socket's port");
    int rc = coll__token_generate(l->token);
    if (rc) return fail(l, rc, "cannot generate a job token: getrandom: %s", strerror(errno));
    return COLL_OK;
}

static void install_handlers(launcher *l)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESTART;
    wake_fd = l->wake_wr;
    /* An ignored SIGINT/SIGTERM/SIGHUP (background job, nohup) stays ignored,
     * and the ranks inherit that. SIGHUP (the terminal closed) is handled as
     * SIGTERM is: forwarded, and the verdict says so. SIGCHLD is always ours:
     * SIG_IGN would reap the ranks before we could read their status. */
    sigaction(SIGINT, NULL, &l->old_int);
    sigaction(SIGTERM, NULL, &l->old_term);
    sigaction(SIGHUP, NULL, &l->old_hup);
    if (l->old_int.sa_handler != SIG_IGN) sigaction(SIGINT, &sa, NULL);
    if (l->old_term.sa_handler != SIG_IGN) sigaction(SIGTERM, &sa, NULL);
    if (l->old_hup.sa_handler != SIG_IGN) sigaction(SIGHUP, &sa, NULL);
    sa.sa_flags = SA_RESTART | SA_NOCLDSTOP;
    sigaction(SIGCHLD, &sa, &l->old_chld);
    l->handlers_installed = 1;
}

static void restore_handlers(launcher *l)
{
    if (!l->handlers_installed) return;
    sigaction(SIGCHLD, &l->old_chld, NULL);
    sigaction(SIGINT, &l->old_int, NULL);
    sigaction(SIGTERM, &l->old_term, NULL);
    sigaction(SIGHUP, &l->old_hup, NULL);
    l->handlers_installed = 0;
    wake_fd = -1;
}

/* ---- starting the ranks ---------------------------------------------------------- */

/* In the child: only async-signal-safe calls until exec (the caller may have threads). */
__attribute__((noreturn)) static void run_rank(launcher *l, int rank, int err_wr,
                                               const sigset_t *caller_mask)
{
    sigaction(SIGCHLD, &l->old_chld, NULL);
    sigaction(SIGINT, &l->old_int, NULL);
    sigaction(SIGTERM, &l->old_term, NULL);
    sigaction(SIGHUP, &l->old_hup, NULL);
    setpgid(0, 0); /* own group: stopping a rank stops its children too */
    if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || getppid() != l->self) _exit(126);
    int e = 0;
    if (rank == 0) {
        if (fcntl(l->listen_fd, F_SETFD, 0) < 0 || fcntl(l->results_wr, F_SETFD, 0) < 0) e = errno;
    } else {
        close(l->listen_fd);
        /* every rank writes its done mark there; without marks only rank 0 writes */
        if (!l->opts->done_marks) close(l->results_wr);
        else if (fcntl(l->results_wr, F_SETFD, 0) < 0) e = errno;
    }
    if (!e) {
        pthread_sigmask(SIG_SETMASK, caller_mask, NULL);
        if (l->bind_cpus) coll_bind_apply_cpu(l->bind_cpus[rank]); /* best effort */
        if (strchr(l->path, '/')) execve(l->path, l->argv, l->envp[rank]);
        else execvpe(l->path, l->argv, l->envp[rank]);
        e = errno;
    }
    ssize_t w = write(err_wr, &e, sizeof e);
    (void)w;
    _exit(127);
}

/* Forks one rank and waits until it has exec'd (a CLOEXEC pipe closes) or reports
 * why it could not. */
static int spawn_rank(launcher *l, int rank)
{
    int errpipe[2];
    if (pipe2(errpipe, O_CLOEXEC) < 0)
        return fail(l, COLL_ESYS, "cannot create a pipe for rank %d: %s", rank, strerror(errno));
    sigset_t all, caller_mask;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, &caller_mask); /* no handler may run in the child */
    pid_t pid = fork();
    if (pid == 0) run_rank(l, rank, errpipe[1], &caller_mask);
    int fork_errno = errno;
    pthread_sigmask(SIG_SETMASK, &caller_mask, NULL);
    close(errpipe[1]);
    if (pid < 0) {
        close(errpipe[0]);
        return fail(l, COLL_ESYS, "cannot fork rank %d: %s", rank, strerror(fork_errno));
    }
    setpgid(pid, pid); /* the child does it too: whichever runs first wins */
    l->ranks[rank].pid = pid;
    l->ranks[rank].alive = 1;
    l->nalive++;
    int child_errno = 0;
    ssize_t got;
    do got = read(errpipe[0], &child_errno, sizeof child_errno);
    while (got < 0 && errno == EINTR);
    close(errpipe[0]);
    if (got == (ssize_t)sizeof child_errno)
        return fail(l, COLL_ESYS, "cannot run %.100s for rank %d: %s", l->path, rank,
                    strerror(child_errno));
    return COLL_OK;
}

/* ---- watching the ranks ---------------------------------------------------------- */

static void signal_rank(const rank_proc *p, int sig)
{
    if (kill(-p->pid, sig) < 0) kill(p->pid, sig); /* group gone: the rank alone */
}

static void signal_alive(launcher *l, int sig)
{
    for (int r = 0; r < l->n; r++)
        if (l->ranks[r].alive) {
            int level = sig == SIGKILL ? 2 : 1;
            if (l->ranks[r].stopped < level) l->ranks[r].stopped = level;
            signal_rank(&l->ranks[r], sig);
        }
}

static void start_stopping(launcher *l)
{
    double grace = l->opts->grace_s;
    if (grace == 0) grace = DEFAULT_GRACE_S;
    if (grace < 0) grace = 0;
    l->phase = STOP_GRACE;
    l->phase_deadline = coll__now_s() + grace;
}

/* How surely rank p's end is the job's cause. A rank that sees a peer die
 * exits 3, sometimes before the dead peer can be reaped, so the first failure
 * reaped is not the verdict: the strongest of all of them is. */
static int weight(const rank_proc *p)
{
    /* Ended only by SIGKILL while the others failed: hung or stopped (SIGSTOP).
     * Ended by our SIGTERM: it was only waiting, weaker than a peer's exit 3. */
    if (p->stopped) return p->stopped == 2 ? 1 : -1;
    if (p->lost) return 0;
    if (p->early) return 4;               /* left the others mid-run: they failed on it */
    if (WIFSIGNALED(p->status)) return 3; /* killed by a signal nobody here sent */
    return WEXITSTATUS(p->status) == PEER_FAILURE_CODE ? 0 : 2; /* its own error (2: usage) */
}

static void describe_failure(launcher *l, int rank)
{
    coll__launch_result *res = l->res;
    const rank_proc *p = &l->ranks[rank];
    res->failed_rank = rank;
    res->exit_code = PEER_FAILURE_CODE;
    if (p->lost) {
        snprintf(res->message, sizeof res->message,
                 "rank %d ended but its exit status was lost (reaped by someone else)", rank);
    } else if (p->stopped == 2) {
        snprintf(res->message, sizeof res->message,
                 "rank %d hung (or was stopped): it did not end when the other ranks failed, "
                 "nor on SIGTERM, and was killed",
                 rank);
    } else if (p->early) {
        snprintf(res->message, sizeof res->message,
                 "rank %d exited with code 0 before the others finished (they failed waiting for "
                 "it)",
                 rank);
    } else if (WIFSIGNALED(p->status)) {
        int sig = WTERMSIG(p->status);
        snprintf(res->message, sizeof res->message, "rank %d killed by signal %d (%s)", rank, sig,
                 strsignal(sig));
    } else {
        res->exit_code = WEXITSTATUS(p->status);
        snprintf(res->message, sizeof res->message, "rank %d exited with code %d", rank,
                 res->exit_code);
    }
}

/* A rank that ended with 0 in a job whose failures are only ranks that saw a
 * peer go (exit 3) or were stopped by us: it left the others mid-collective
 * (a script returning early on one rank), and it is the cause. Not the reap
 * order: the ranks it left can end before its own exit is complete (freeing a
 * large buffer takes a while). The first such rank reaped, or -1. */
static int early_clean_exit(const launcher *l, int best)
{
    if (best < 0 || weight(&l->ranks[best]) > 0) return -1;
    int early = -1;
    for (int r = 0; r < l->n; r++) {
        const rank_proc *p = &l->ranks[r];
        if (!p->failed && p->reaped && (early < 0 || p->reaped < l->ranks[early].reaped)) early = r;
    }
    return early;
}

/* What the ranks' blame marks say (launch_blame.h). The reap order says
 * nothing here: the hung rank ends last, on our SIGTERM, and the ranks that
 * waited for it end in whatever order their timeouts and ABORTs reach them. */
static coll__launch_blamed blamed_by_marks(const launcher *l)
{
    coll__launch_blamed none = {-1, -1, 0};
    if (l->n <= 0) return none; /* also tells gcc the count cannot wrap */
    coll__launch_blame_rank *in = calloc((size_t)l->n, sizeof *in);
    if (!in) return none;
    for (int r = 0; r < l->n; r++) {
        const rank_proc *p = &l->ranks[r];
        in[r] = (coll__launch_blame_rank){p->failed, p->stopped, p->blames, p->reaped};
    }
    coll__launch_blamed out = coll__launch_blame(in, l->n);
    free(in);
    return out;
}

/* The verdict from the blame marks: rank `rank`, which `direct` (and `votes`
 * failed ranks in all, down their chains) failed waiting for; direct -1: the
 * lone rank we had to stop. */
static void describe_blamed(launcher *l, int rank, int direct, int votes)
{
    coll__launch_result *res = l->res;
    const rank_proc *p = &l->ranks[rank];
    char who[96];
    if (direct < 0)
        snprintf(who, sizeof who,
                 "every other failed rank ended on its own (none said whom it "
                 "waited for)");
    else if (votes > 1)
        snprintf(who, sizeof who, "rank %d failed waiting for it (%d ranks' blame leads to it)",
                 direct, votes);
    else snprintf(who, sizeof who, "rank %d failed waiting for it", direct);
    res->failed_rank = rank;
    res->exit_code = PEER_FAILURE_CODE;
    if (p->stopped)
        snprintf(res->message, sizeof res->message,
                 "rank %d hung (or was stopped): %s, and it ended only when the launcher %s it",
                 rank, who, p->stopped == 2 ? "killed" : "stopped");
    else if (p->lost || !WIFEXITED(p->status))
        snprintf(res->message, sizeof res->message, "rank %d failed: %s", rank, who);
    else {
        res->exit_code = WEXITSTATUS(p->status);
        snprintf(res->message, sizeof res->message, "rank %d exited with code %d: %s", rank,
                 res->exit_code, who);
    }
}

/* Once every rank has ended: name the failed rank of the greatest weight, or
 * the rank that left early with 0 when that is what the others failed on, or,
 * when every failure is a rank that saw a peer go or was stopped by us, the
 * rank the failed ranks' blame marks lead to. */
static void record_verdict(launcher *l)
{
    int best = -1;
    for (int r = 0; r < l->n; r++) {
        const rank_proc *p = &l->ranks[r];
        if (!p->failed) continue;
        if (best < 0 || weight(p) > weight(&l->ranks[best]) ||
            (weight(p) == weight(&l->ranks[best]) && p->reaped < l->ranks[best].reaped))
            best = r;
    }
    if (best < 0 || l->interrupted_first) return;
    int early = early_clean_exit(l, best);
    coll__launch_blamed blamed = {-1, -1, 0};
    if (early < 0 && weight(&l->ranks[best]) <= 1) /* only peer failures and ranks we stopped */
        blamed = blamed_by_marks(l);
    if (blamed.rank >= 0) {
        describe_blamed(l, blamed.rank, blamed.direct, blamed.votes);
        return;
    }
    if (early < 0) {
        describe_failure(l, best);
        return;
    }
    l->res->failed_rank = early;
    l->res->exit_code = PEER_FAILURE_CODE;
    snprintf(l->res->message, sizeof l->res->message,
             "rank %d exited with code 0 before the others finished (they failed waiting for it)",
             early);
}

static void read_results(launcher *l);

/* p exited 0 while others run: did it end normally (its done mark, written
 * before it exited, is in the pipe by now) or leave them early? */
static int left_early(launcher *l, const rank_proc *p)
{
    if (!l->opts->done_marks) return 0;
    for (int i = 0; i < 64 && !p->done && l->results_rd >= 0; i++) read_results(l);
    return !p->done;
}

static void reap_ranks(launcher *l)
{
    for (int r = 0; r < l->n; r++) {
        rank_proc *p = &l->ranks[r];
        if (!p->alive) continue;
        int status = 0;
        pid_t w;
        do w = waitpid(p->pid, &status, WNOHANG);
        while (w < 0 && errno == EINTR);
        if (w == 0) continue;
        p->alive = 0;
        l->nalive--;
        p->reaped = ++l->nreaped;
        p->status = status;
        p->lost = w < 0; /* ECHILD: another waitpid(-1) in this process took it */
        p->failed = p->lost || !WIFEXITED(status) || WEXITSTATUS(status) != 0;
        if (!p->failed && l->nalive > 0 && !l->failure_recorded && left_early(l, p))
            p->failed = p->early = 1;
        if (p->failed && !l->failure_recorded) {
            l->failure_recorded = 1;
            start_stopping(l);
        }
    }
}

static void interrupt(launcher *l, int sig)
{
    if (l->res->interrupted_by) { /* asked twice: stop now */
        signal_alive(l, SIGKILL);
        l->phase = STOP_KILL;
        return;
    }
    l->res->interrupted_by = sig;
    signal_alive(l, sig);
    if (l->failure_recorded) return;
    l->failure_recorded = 1;
    l->interrupted_first = 1;
    l->res->failed_rank = -1;
    l->res->exit_code = 128 + sig;
    snprintf(l->res->message, sizeof l->res->message,
             "interrupted by signal %d (%s), forwarded to the ranks", sig, strsignal(sig));
    start_stopping(l);
}

static void handle_wakeups(launcher *l)
{
    unsigned char buf[64];
    ssize_t n;
    while ((n = read(l->wake_rd, buf, sizeof buf)) > 0)
        for (ssize_t i = 0; i < n; i++)
            if (buf[i] == SIGINT || buf[i] == SIGTERM || buf[i] == SIGHUP) interrupt(l, buf[i]);
    /* SIGCHLD bytes only wake the loop: it reaps after every wakeup. */
}

static void escalate(launcher *l)
{
    if (l->nalive == 0) return;
    double now = coll__now_s();
    if (l->phase == STOP_GRACE && now >= l->phase_deadline) {
        signal_alive(l, SIGTERM);
        /* A stopped rank (SIGSTOP, a debugger's ^Z) holds SIGTERM pending
         * until it runs again: it would wait out TERM_TO_KILL_S for SIGKILL. */
        for (int r = 0; r < l->n; r++)
            if (l->ranks[r].alive) signal_rank(&l->ranks[r], SIGCONT);
        l->phase = STOP_TERM;
        l->phase_deadline = now + TERM_TO_KILL_S;
    } else if (l->phase == STOP_TERM && now >= l->phase_deadline) {
        signal_alive(l, SIGKILL);
        l->phase = STOP_KILL;
    }
}

/* ---- results lines --------------------------------------------------------------- */

/* "R B" of a blame mark: rank R blames rank B, another rank of the job;
 * "R ?": R timed out waiting and cannot say for whom. */
static void read_blame(launcher *l, const char *s)
{
    char *end, *end2;
    long r = strtol(s, &end, 10);
    if (end == s || *end != ' ') return;
    if (!strcmp(end + 1, "?") && r >= 0 && r < l->n) {
        l->ranks[r].blames = COLL_BLAMED_UNKNOWN;
        return;
    }
    long b = strtol(end + 1, &end2, 10);
    if (end2 == end + 1 || *end2 || r < 0 || r >= l->n || b < 0 || b >= l->n || b == r) return;
    l->ranks[r].blames = (int)b;
}

static void emit_line(launcher *l, const char *line)
{
    size_t mark = sizeof COLL_DONE_MARK - 1, blame = sizeof COLL_BLAME_MARK - 1;
    if (!strncmp(line, COLL_DONE_MARK, mark)) {
        char *end;
        long r = strtol(line + mark, &end, 10);
        if (end != line + mark && !*end && r >= 0 && r < l->n) l->ranks[r].done = 1;
        return;
    }
    if (!strncmp(line, COLL_BLAME_MARK, blame)) {
        read_blame(l, line + blame);
        return;
    }
    if (l->opts->on_result_line) l->opts->on_result_line(line, l->opts->arg);
}

static void append_line(launcher *l, const char *p, size_t n)
{
    if (l->line_dropped) return;
    if (l->line_len + n + 1 > l->line_cap) {
        size_t cap = l->line_cap ? l->line_cap : 256;
        while (cap < l->line_len + n + 1) cap *= 2;
        char *grown = realloc(l->line, cap);
        if (!grown) {
            l->line_dropped = 1;
            l->line_len = 0;
            l->status = COLL_ENOMEM;
            return;
        }
        l->line = grown;
        l->line_cap = cap;
    }
    memcpy(l->line + l->line_len, p, n);
    l->line_len += n;
    l->line[l->line_len] = '\0';
}

static void split_lines(launcher *l, char *p, size_t n)
{
    while (n > 0) {
        char *nl = memchr(p, '\n', n);
        size_t take = nl ? (size_t)(nl - p) : n;
        if (nl && l->line_len == 0 && !l->line_dropped) {
            *nl = '\0'; /* whole line inside this chunk: no copy */
            emit_line(l, p);
        } else {
            append_line(l, p, take);
            if (nl) {
                if (!l->line_dropped) emit_line(l, l->line);
                l->line_len = 0;
                l->line_dropped = 0;
            }
        }
        if (!nl) return;
        p = nl + 1;
        n -= take + 1;
    }
}

static void close_results(launcher *l)
{
    if (l->line_len > 0 && !l->line_dropped) emit_line(l, l->line); /* last line, no '\n' */
    l->line_len = 0;
    close_fd(&l->results_rd);
}

static void read_results(launcher *l)
{
    static char buf[READ_CHUNK]; /* one launch at a time (launch_busy) */
    for (int i = 0; i < 16 && l->results_rd >= 0; i++) {
        ssize_t n = read(l->results_rd, buf, sizeof buf);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;
        if (n <= 0) { /* EOF: rank 0 and everything it started closed the pipe */
            close_results(l);
            return;
        }
        split_lines(l, buf, (size_t)n);
    }
}

/* Every rank is gone but the pipe is still open: a leftover child of rank 0 holds
 * it. Give it DRAIN_S, then kill rank 0's process group, then stop reading. */
static void drain_leftovers(launcher *l)
{
    if (l->nalive > 0 || l->results_rd < 0) return;
    double now = coll__now_s();
    if (l->drain_deadline == 0) {
        l->drain_deadline = now + DRAIN_S;
    } else if (now >= l->drain_deadline) {
        if (!l->drain_killed) {
            kill(-l->ranks[0].pid, SIGKILL);
            l->drain_killed = 1;
            l->drain_deadline = now + DRAIN_S;
        } else {
            close_results(l);
        }
    }
}

static int poll_timeout_ms(const launcher *l)
{
    double deadline = coll__now_s() + POLL_CAP_MS / 1e3;
    if ((l->phase == STOP_GRACE || l->phase == STOP_TERM) && l->phase_deadline < deadline)
        deadline = l->phase_deadline;
    if (l->nalive == 0 && l->drain_deadline > 0 && l->drain_deadline < deadline)
        deadline = l->drain_deadline;
    return coll__ms_until(deadline, POLL_CAP_MS);
}

static int watch_ranks(launcher *l)
{
    while (l->nalive > 0 || l->results_rd >= 0) {
        struct pollfd p[2] = {{.fd = l->wake_rd, .events = POLLIN},
                              {.fd = l->results_rd, .events = POLLIN}};
        int nfds = l->results_rd >= 0 ? 2 : 1;
        int r = poll(p, (nfds_t)nfds, poll_timeout_ms(l));
        if (r < 0 && errno != EINTR)
            return fail(l, COLL_ESYS, "launcher: poll failed: %s", strerror(errno));
        if (r > 0 && p[0].revents) handle_wakeups(l);
        if (r > 0 && nfds == 2 && p[1].revents) read_results(l);
        reap_ranks(l);
        escalate(l);
        drain_leftovers(l);
    }
    return COLL_OK;
}

/* Launch failed half-way: stop and reap what was started. */
static void kill_all(launcher *l)
{
    signal_alive(l, SIGKILL);
    for (int r = 0; r < l->n; r++) {
        if (!l->ranks[r].alive) continue;
        while (waitpid(l->ranks[r].pid, NULL, 0) < 0 && errno == EINTR) {
        }
        l->ranks[r].alive = 0;
    }
    l->nalive = 0;
}

static void cleanup(launcher *l)
{
    close_fd(&l->listen_fd);
    close_fd(&l->results_wr);
    close_fd(&l->results_rd);
    restore_handlers(l); /* before closing the pipe the handler writes to */
    close_fd(&l->wake_rd);
    close_fd(&l->wake_wr);
    if (l->envp)
        for (int r = 0; r < l->n; r++) free(l->envp[r]);
    free(l->envp);
    free(l->own_vars);
    free(l->base_env);
    free(l->self_argv);
    free(l->ranks);
    free(l->line);
    free(l->bind_cpus);
}

static int launch(launcher *l)
{
    int rc = check_opts(l);
    if (!rc) rc = choose_program(l);
    if (!rc) {
        l->ranks = calloc((size_t)l->n, sizeof *l->ranks);
        if (!l->ranks) rc = fail(l, COLL_ENOMEM, "out of memory for %d ranks", l->n);
        for (int r = 0; !rc && r < l->n; r++) l->ranks[r].blames = -1;
    }
    if (!rc) rc = open_channels(l);
    if (!rc) rc = build_envs(l);
    if (!rc && coll_bind_from_env() != COLL_BIND_NONE) { /* planned here: no malloc after fork */
        l->bind_cpus = calloc((size_t)l->n, sizeof *l->bind_cpus);
        if (l->bind_cpus && coll_bind_plan(coll_bind_from_env(), l->n, l->bind_cpus) != COLL_OK) {
            free(l->bind_cpus);
            l->bind_cpus = NULL;
        }
    }
    if (rc) return rc;
    install_handlers(l);
    for (int r = 0; r < l->n && !rc; r++) rc = spawn_rank(l, r);
    /* Rank 0 holds the socket and the write end now; our copies would keep the port
     * open and the pipe from ever reaching EOF. */
    close_fd(&l->listen_fd);
    close_fd(&l->results_wr);
    if (!rc) rc = watch_ranks(l);
    if (rc) {
        kill_all(l);
        return rc;
    }
    record_verdict(l);
    if (!l->failure_recorded)
        snprintf(l->res->message, sizeof l->res->message, "all %d ranks exited with code 0", l->n);
    return l->status;
}

int coll__launch(const coll__launch_opts *opts, coll__launch_result *res)
{
    if (!res) return COLL_EINVAL;
    memset(res, 0, sizeof *res);
    res->failed_rank = -1;
    if (!opts) {
        snprintf(res->message, sizeof res->message, "coll__launch: opts is NULL");
        res->exit_code = PEER_FAILURE_CODE;
        return COLL_EINVAL;
    }
    if (atomic_flag_test_and_set(&launch_busy)) {
        snprintf(res->message, sizeof res->message,
                 "coll__launch: another launch is running in this process");
        res->exit_code = PEER_FAILURE_CODE;
        return COLL_EINVAL;
    }
    launcher l;
    memset(&l, 0, sizeof l);
    l.opts = opts;
    l.res = res;
    l.n = opts->nprocs;
    l.self = getpid();
    l.listen_fd = l.results_rd = l.results_wr = l.wake_rd = l.wake_wr = -1;
    int rc = launch(&l);
    cleanup(&l);
    atomic_flag_clear(&launch_busy);
    return rc;
}
