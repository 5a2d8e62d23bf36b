/* Launcher: ranks are /bin/sh scripts (or this binary, for /proc/self/exe), so
 * every test sees what a real rank would see: its environment, its fds, how it
 * is stopped, and what the launcher reports. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include "launch/launcher.h"
#include "coll.h"
#include "core/token.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

/* dash only redirects to single-digit fds (>&12 fails), so scripts write to the
 * results fd through /proc/self/fd, which works for any fd number. */
#define TO_RESULTS " >/proc/self/fd/$COLL_RESULTS_FD"

typedef struct lines {
    char **v;
    int n, cap;
} lines;

static void collect_line(const char *line, void *arg)
{
    lines *l = arg;
    if (l->n == l->cap) {
        l->cap = l->cap ? 2 * l->cap : 16;
        l->v = realloc(l->v, (size_t)l->cap * sizeof *l->v);
        assert_non_null(l->v);
    }
    l->v[l->n] = strdup(line);
    assert_non_null(l->v[l->n]);
    l->n++;
}

static void lines_free(lines *l)
{
    for (int i = 0; i < l->n; i++) free(l->v[i]);
    free(l->v);
    memset(l, 0, sizeof *l);
}

static int count_open_fds(void)
{
    DIR *d = opendir("/proc/self/fd");
    assert_non_null(d);
    int n = 0;
    for (struct dirent *e; (e = readdir(d));)
        if (e->d_name[0] != '.') n++;
    closedir(d);
    return n;
}

static void assert_no_children(void)
{
    errno = 0;
    assert_int_equal(waitpid(-1, NULL, WNOHANG), -1);
    assert_int_equal(errno, ECHILD);
}

static int file_exists(const char *dir, const char *name)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    return access(path, F_OK) == 0;
}

static char *read_file(const char *dir, const char *name)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "r");
    if (!f) return NULL;
    static char buf[4096];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    return buf;
}

/* Per-test scratch directory, passed to the ranks as $DIR. */
typedef struct fixture {
    char dir[64];
    char dir_env[96];
    int fds_before;
} fixture;

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    if (!f) return -1;
    snprintf(f->dir, sizeof f->dir, "/tmp/collbench-launcher-XXXXXX");
    if (!mkdtemp(f->dir)) return -1;
    snprintf(f->dir_env, sizeof f->dir_env, "DIR=%s", f->dir);
    f->fds_before = count_open_fds();
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    DIR *d = opendir(f->dir);
    if (d) {
        char path[600];
        for (struct dirent *e; (e = readdir(d));) {
            if (e->d_name[0] == '.') continue;
            snprintf(path, sizeof path, "%s/%s", f->dir, e->d_name);
            unlink(path);
        }
        closedir(d);
    }
    rmdir(f->dir);
    free(f);
    return 0;
}

/* Launch `script` under /bin/sh on n ranks; checks nothing leaked afterwards. */
static int run_script(fixture *f, int n, const char *script, double grace, lines *out,
                      coll__launch_result *res)
{
    char *argv[] = {"/bin/sh", "-c", (char *)script, NULL};
    const char *env[] = {f->dir_env, NULL};
    coll__launch_opts o = {.nprocs = n,
                           .argv = argv,
                           .extra_env = env,
                           .grace_s = grace,
                           .on_result_line = out ? collect_line : NULL,
                           .arg = out};
    int rc = coll__launch(&o, res);
    assert_no_children();
    assert_int_equal(count_open_fds(), f->fds_before);
    return rc;
}

static void test_token_is_64_hex_and_fresh(void **state)
{
    (void)state;
    char a[COLL_TOKEN_HEX_LEN + 1], b[COLL_TOKEN_HEX_LEN + 1];
    assert_int_equal(coll__token_generate(a), COLL_OK);
    assert_int_equal(coll__token_generate(b), COLL_OK);
    assert_int_equal(strlen(a), 64);
    assert_true(strspn(a, "0123456789abcdef") == 64);
    assert_true(coll__token_is_valid(a));
    assert_true(coll__token_is_valid(b));
    assert_string_not_equal(a, b);
    assert_false(coll__token_is_valid("abc"));
    a[10] = 'G';
    assert_false(coll__token_is_valid(a));
}

/* Every rank records what it sees; only rank 0 may hold the store socket and the
 * results pipe. */
static const char env_script[] =
    "socks=0; for f in /proc/$$/fd/*; do case $(readlink $f) in socket:*) socks=$((socks+1));; "
    "esac; done; "
    "echo \"$RANK $WORLD_SIZE $LOCAL_RANK $LOCAL_WORLD_SIZE $GROUP_RANK $MASTER_ADDR "
    "$MASTER_PORT $COLL_LAUNCHED ${COLL_STORE_FD-none} ${COLL_RESULTS_FD-none} $socks "
    "$EXTRA $INHERITED $COLL_JOB_TOKEN\" > \"$DIR/rank.$RANK\"; "
    "if [ \"$RANK\" = 0 ]; then echo \"$RANK $WORLD_SIZE $LOCAL_RANK\"" TO_RESULTS "; fi";

static void check_rank_file(fixture *f, int n, int r, int *port, char *token)
{
    char name[32];
    snprintf(name, sizeof name, "rank.%d", r);
    char *s = read_file(f->dir, name);
    assert_non_null(s);
    int rank, world, lrank, lworld, group, p, launched, socks;
    char addr[32], store_fd[16], results_fd[16], extra[32], inherited[32], tok[80];
    assert_int_equal(sscanf(s, "%d %d %d %d %d %31s %d %d %15s %15s %d %31s %31s %79s", &rank,
                            &world, &lrank, &lworld, &group, addr, &p, &launched, store_fd,
                            results_fd, &socks, extra, inherited, tok),
                     14);
    assert_int_equal(rank, r);
    assert_int_equal(world, n);
    assert_int_equal(lrank, r);
    assert_int_equal(lworld, n);
    assert_int_equal(group, 0);
    assert_string_equal(addr, "127.0.0.1");
    assert_true(p > 0 && p < 65536);
    assert_int_equal(launched, 1);
    assert_string_equal(extra, "from-extra");
    assert_string_equal(inherited, "yes");
    assert_true(coll__token_is_valid(tok));
    if (r == 0) {
        assert_true(atoi(store_fd) > 2);
        assert_true(atoi(results_fd) > 2);
        assert_int_equal(socks, 1);
        *port = p;
        strcpy(token, tok);
    } else {
        assert_string_equal(store_fd, "none");
        assert_string_equal(results_fd, "none");
        assert_int_equal(socks, 0);
        assert_int_equal(p, *port);
        assert_string_equal(tok, token);
    }
}

static void test_all_ranks_succeed_and_see_their_env(void **state)
{
    fixture *f = *state;
    char prev_token[COLL_TOKEN_HEX_LEN + 1] = "";
    setenv("INHERITED", "yes", 1);
    setenv("RANK", "99", 1); /* a stale value must not leak into the ranks */
    for (int n = 1; n <= 6; n++) {
        char *argv[] = {"/bin/sh", "-c", (char *)env_script, NULL};
        /* RANK=77 tries to override the launcher's own variable: ignored. */
        const char *env[] = {f->dir_env, "EXTRA=from-extra", "RANK=77", NULL};
        lines out = {0};
        coll__launch_opts o = {.nprocs = n,
                               .argv = argv,
                               .extra_env = env,
                               .grace_s = 0.5,
                               .on_result_line = collect_line,
                               .arg = &out};
        coll__launch_result res;
        assert_int_equal(coll__launch(&o, &res), COLL_OK);
        assert_no_children();
        assert_int_equal(count_open_fds(), f->fds_before);
        assert_int_equal(res.exit_code, 0);
        assert_int_equal(res.failed_rank, -1);
        assert_int_equal(res.interrupted_by, 0);
        assert_int_equal(out.n, 1);
        char expect[32];
        snprintf(expect, sizeof expect, "0 %d 0", n);
        assert_string_equal(out.v[0], expect);
        lines_free(&out);
        int port = 0;
        char token[COLL_TOKEN_HEX_LEN + 1] = "";
        for (int r = 0; r < n; r++) check_rank_file(f, n, r, &port, token);
        assert_string_not_equal(token, prev_token);
        strcpy(prev_token, token);
    }
    unsetenv("INHERITED");
    unsetenv("RANK");
}

typedef struct connect_probe {
    const char *dir;
    int connected;
    int port;
    int launcher_sockets;   /* sockets open in the launcher while rank 0 runs */
    int launcher_pipe_ends; /* fds of the launcher on the results pipe */
} connect_probe;

static int connect_local(int port)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    assert_true(fd >= 0);
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    int rc = connect(fd, (struct sockaddr *)&sa, sizeof sa);
    close(fd);
    return rc;
}

/* How many of this process's fds link to target ("pipe:[123]"), or to any
 * socket when target is "socket:". */
static int count_fds_linking_to(const char *target)
{
    DIR *d = opendir("/proc/self/fd");
    assert_non_null(d);
    int n = 0;
    for (struct dirent *e; (e = readdir(d));) {
        char path[300], link[128];
        if (e->d_name[0] == '.') continue;
        snprintf(path, sizeof path, "/proc/self/fd/%s", e->d_name);
        ssize_t len = readlink(path, link, sizeof link - 1);
        if (len <= 0) continue;
        link[len] = '\0';
        if (strncmp(link, target, strlen(target)) == 0) n++;
    }
    closedir(d);
    return n;
}

/* Runs in the launcher while rank 0 waits: the port must accept connections,
 * and the launcher itself must hold neither the socket nor the pipe's write end. */
static void probe_store_port(const char *line, void *arg)
{
    connect_probe *p = arg;
    char pipe_name[64];
    assert_int_equal(sscanf(line, "port %d %63s", &p->port, pipe_name), 2);
    p->launcher_sockets = count_fds_linking_to("socket:");
    p->launcher_pipe_ends = count_fds_linking_to(pipe_name);
    p->connected = connect_local(p->port) == 0;
    char path[512];
    snprintf(path, sizeof path, "%s/connected", p->dir);
    FILE *fp = fopen(path, "w");
    assert_non_null(fp);
    fclose(fp);
}

static void test_rank0_holds_the_store_socket(void **state)
{
    fixture *f = *state;
    const char *script =
        "if [ \"$RANK\" = 0 ]; then "
        "echo \"port $MASTER_PORT $(readlink /proc/$$/fd/$COLL_RESULTS_FD)\"" TO_RESULTS "; "
        "i=0; while [ ! -e \"$DIR/connected\" ]; do i=$((i+1)); [ $i -gt 400 ] && exit 9; "
        "sleep 0.05; done; fi";
    char *argv[] = {"/bin/sh", "-c", (char *)script, NULL};
    const char *env[] = {f->dir_env, NULL};
    connect_probe probe = {.dir = f->dir};
    coll__launch_opts o = {.nprocs = 2,
                           .argv = argv,
                           .extra_env = env,
                           .on_result_line = probe_store_port,
                           .arg = &probe};
    coll__launch_result res;
    assert_int_equal(coll__launch(&o, &res), COLL_OK);
    assert_int_equal(res.exit_code, 0);
    assert_true(probe.connected);
    assert_int_equal(probe.launcher_sockets, 0);
    assert_int_equal(probe.launcher_pipe_ends, 1); /* the read end only */
    /* Rank 0 is gone and the launcher closed its copy: nobody listens any more. */
    assert_int_not_equal(connect_local(probe.port), 0);
    assert_no_children();
    assert_int_equal(count_open_fds(), f->fds_before);
}

/* A rank's child, written to $DIR/sleep.$RANK, must end with its rank. */
static void assert_sleeper_stopped(fixture *f, int r)
{
    char name[32];
    snprintf(name, sizeof name, "sleep.%d", r);
    char *s = read_file(f->dir, name);
    assert_non_null(s);
    int pid = atoi(s);
    assert_true(pid > 1);
    /* Killed is not yet gone: give the kernel a moment to finish it (an orphan
     * stays a zombie until init reaps it). */
    char path[64], stat[512];
    snprintf(path, sizeof path, "/proc/%d/stat", pid);
    int stopped = 0;
    for (int i = 0; i < 1000 && !stopped; i++) {
        FILE *fp = fopen(path, "r");
        if (!fp) {
            stopped = 1;
            break;
        }
        size_t n = fread(stat, 1, sizeof stat - 1, fp);
        fclose(fp);
        stat[n] = '\0';
        char *paren = strrchr(stat, ')');
        stopped = paren && (paren[2] == 'Z' || paren[2] == 'X');
        if (!stopped) usleep(10000);
    }
    assert_true(stopped);
}

/* Each rank but $FAIL starts a sleeper in the background and records its pid;
 * $FAIL exits 5 once all sleepers are recorded. */
static const char sleeper_script[] =
    "if [ \"$RANK\" = \"$FAIL\" ]; then "
    "while [ $(ls \"$DIR\" | grep -c '^sleep\\.') -lt $((WORLD_SIZE-1)) ]; do sleep 0.05; done; "
    "exit 5; fi; "
    "sleep 100 & echo $! > \"$DIR/tmp.$RANK\"; mv \"$DIR/tmp.$RANK\" \"$DIR/sleep.$RANK\"; "
    "wait; touch \"$DIR/done.$RANK\"";

static void test_failing_rank_stops_the_others(void **state)
{
    fixture *f = *state;
    for (int n = 2; n <= 6; n += 4) {
        char fail_env[32];
        int fail_rank = n / 2;
        snprintf(fail_env, sizeof fail_env, "FAIL=%d", fail_rank);
        char *argv[] = {"/bin/sh", "-c", (char *)sleeper_script, NULL};
        const char *env[] = {f->dir_env, fail_env, NULL};
        coll__launch_opts o = {.nprocs = n, .argv = argv, .extra_env = env, .grace_s = 0.5};
        coll__launch_result res;
        assert_int_equal(coll__launch(&o, &res), COLL_OK);
        assert_no_children();
        assert_int_equal(count_open_fds(), f->fds_before);
        assert_int_equal(res.exit_code, 5);
        assert_int_equal(res.failed_rank, fail_rank);
        char expect[64];
        snprintf(expect, sizeof expect, "rank %d exited with code 5", fail_rank);
        assert_string_equal(res.message, expect);
        for (int r = 0; r < n; r++) {
            char name[32];
            snprintf(name, sizeof name, "done.%d", r);
            assert_false(file_exists(f->dir, name));
            if (r != fail_rank) assert_sleeper_stopped(f, r);
            char path[128];
            snprintf(path, sizeof path, "%s/sleep.%d", f->dir, r);
            unlink(path);
        }
    }
}

/* Rank 0 exits 0 but leaves a child holding the results pipe: the launcher
 * still delivers the lines, stops that child and returns. */
static void test_leftover_child_of_rank0_is_stopped(void **state)
{
    fixture *f = *state;
    const char *script = "[ \"$RANK\" = 0 ] || exit 0; "
                         "sleep 600 & echo $! > \"$DIR/sleep.0\"; echo started" TO_RESULTS
                         "; exit 0";
    lines out = {0};
    coll__launch_result res;
    assert_int_equal(run_script(f, 2, script, 0.5, &out, &res), COLL_OK);
    assert_int_equal(res.exit_code, 0);
    assert_int_equal(out.n, 1);
    assert_string_equal(out.v[0], "started");
    assert_sleeper_stopped(f, 0);
    lines_free(&out);
}

/* The peers notice the failure themselves (they wait until the failed rank has
 * been reaped, then exit 3): within the grace period nobody is signalled, and
 * the blame stays with the rank that failed first. */
static void test_peers_exiting_on_their_own_are_not_signalled(void **state)
{
    fixture *f = *state;
    const char *script =
        "if [ \"$RANK\" = 1 ]; then echo $$ > \"$DIR/pid.tmp\"; mv \"$DIR/pid.tmp\" \"$DIR/pid\"; "
        "exit 5; fi; "
        "trap 'touch \"$DIR/term.$RANK\"; exit 9' TERM; "
        "while [ ! -s \"$DIR/pid\" ]; do sleep 0.05; done; p=$(cat \"$DIR/pid\"); "
        "while kill -0 $p 2>/dev/null; do sleep 0.05; done; exit 3";
    coll__launch_result res;
    assert_int_equal(run_script(f, 3, script, 60, NULL, &res), COLL_OK);
    assert_int_equal(res.exit_code, 5);
    assert_int_equal(res.failed_rank, 1);
    assert_false(file_exists(f->dir, "term.0"));
    assert_false(file_exists(f->dir, "term.2"));
}

static void test_rank_killed_by_signal(void **state)
{
    fixture *f = *state;
    const int sigs[] = {SIGKILL, SIGUSR1};
    for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++) {
        char script[256];
        snprintf(script, sizeof script,
                 "if [ \"$RANK\" = 1 ]; then kill -%d $$; fi; sleep 100; touch \"$DIR/done.$RANK\"",
                 sigs[i]);
        coll__launch_result res;
        assert_int_equal(run_script(f, 3, script, 0.5, NULL, &res), COLL_OK);
        assert_int_equal(res.exit_code, 3);
        assert_int_equal(res.failed_rank, 1);
        char expect[128];
        snprintf(expect, sizeof expect, "rank 1 killed by signal %d (%s)", sigs[i],
                 strsignal(sigs[i]));
        assert_string_equal(res.message, expect);
        assert_false(file_exists(f->dir, "done.0"));
        assert_false(file_exists(f->dir, "done.2"));
    }
}

/* A peer that saw the failure may exit 3 before the rank that failed can be
 * reaped: the verdict still names the rank that died, the rank with an error
 * of its own (its code, 2 for a usage error, wins), or the rank that hung. */
static void test_verdict_names_the_cause_not_the_first_reaped(void **state)
{
    fixture *f = *state;
    static const struct {
        const char *rank2; /* what rank 2 does after rank 1 exited 3 */
        int code;
        const char *message;
    } cases[] = {
        {"sleep 0.3; kill -9 $$", 3, "rank 2 killed by signal 9 (Killed)"},
        {"sleep 0.3; exit 2", 2, "rank 2 exited with code 2"},
        {"trap '' TERM; sleep 100", 3, "rank 2 hung"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char script[256];
        snprintf(script, sizeof script,
                 "case $RANK in 1) exit 3;; 2) %s;; 3) sleep 0.6; exit 3;; *) sleep 100;; esac",
                 cases[i].rank2);
        coll__launch_result res;
        assert_int_equal(run_script(f, 4, script, 1.0, NULL, &res), COLL_OK);
        assert_int_equal(res.failed_rank, 2);
        assert_int_equal(res.exit_code, cases[i].code);
        assert_non_null(strstr(res.message, cases[i].message));
    }
}

static void test_result_lines_arrive_whole_and_in_order(void **state)
{
    fixture *f = *state;
    /* Pieces written apart in time, a line larger than a pipe's buffer, many short
     * lines, and a last line without '\n'. */
    const char *script =
        "[ \"$RANK\" = 0 ] || exit 0; "
        "printf 'hel'" TO_RESULTS "; sleep 0.05; "
        "printf 'lo\\nwor'" TO_RESULTS "; sleep 0.05; "
        "printf 'ld\\n\\n'" TO_RESULTS "; "
        "{ head -c 200000 /dev/zero | tr '\\0' x; echo; seq 1 1000; printf 'tail'; }" TO_RESULTS;
    lines out = {0};
    coll__launch_result res;
    assert_int_equal(run_script(f, 2, script, 0.5, &out, &res), COLL_OK);
    assert_int_equal(res.exit_code, 0);
    assert_int_equal(out.n, 3 + 1 + 1000 + 1);
    assert_string_equal(out.v[0], "hello");
    assert_string_equal(out.v[1], "world");
    assert_string_equal(out.v[2], "");
    assert_int_equal(strlen(out.v[3]), 200000);
    assert_true(strspn(out.v[3], "x") == 200000);
    for (int i = 1; i <= 1000; i++) {
        char expect[16];
        snprintf(expect, sizeof expect, "%d", i);
        assert_string_equal(out.v[3 + i], expect);
    }
    assert_string_equal(out.v[1004], "tail");
    lines_free(&out);
}

static volatile sig_atomic_t test_handler_hits;
static void test_handler(int sig)
{
    (void)sig;
    test_handler_hits++;
}

static void interrupt_launcher(const char *line, void *arg)
{
    (void)arg;
    if (strcmp(line, "ready") == 0) kill(getpid(), SIGINT);
}

static void test_interrupt_is_forwarded_and_handlers_restored(void **state)
{
    fixture *f = *state;
    struct sigaction mine = {.sa_handler = test_handler}, before, after;
    sigemptyset(&mine.sa_mask);
    assert_int_equal(sigaction(SIGINT, &mine, &before), 0);
    /* Every rank traps SIGINT; rank 0 says "ready" once all traps are set. */
    const char *script =
        "trap 'kill $! 2>/dev/null; touch \"$DIR/int.$RANK\"; exit 7' INT; touch "
        "\"$DIR/ready.$RANK\"; "
        "if [ \"$RANK\" = 0 ]; then "
        "while [ ! -e \"$DIR/ready.1\" ] || [ ! -e \"$DIR/ready.2\" ]; do sleep 0.05; done; "
        "echo ready" TO_RESULTS "; fi; "
        /* a trapped signal interrupts `wait` at once (a foreground sleep would
         * delay the trap until sleep itself has died, a race under load); the
         * trap kills the background sleep, which ignores SIGINT and would hold
         * the results pipe open */
        "sleep 100 & wait";
    char *argv[] = {"/bin/sh", "-c", (char *)script, NULL};
    const char *env[] = {f->dir_env, NULL};
    coll__launch_opts o = {.nprocs = 3,
                           .argv = argv,
                           .extra_env = env,
                           .grace_s = 10,
                           .on_result_line = interrupt_launcher};
    coll__launch_result res;
    assert_int_equal(coll__launch(&o, &res), COLL_OK);
    assert_no_children();
    assert_int_equal(count_open_fds(), f->fds_before);
    assert_int_equal(res.interrupted_by, SIGINT);
    assert_int_equal(res.exit_code, 128 + SIGINT);
    assert_int_equal(res.failed_rank, -1);
    assert_non_null(strstr(res.message, "interrupted by signal 2"));
    assert_true(file_exists(f->dir, "int.0"));
    assert_true(file_exists(f->dir, "int.1"));
    assert_true(file_exists(f->dir, "int.2"));
    /* The launcher's handler took the signal, not ours; ours is back now. */
    assert_int_equal(test_handler_hits, 0);
    assert_int_equal(sigaction(SIGINT, &before, &after), 0);
    assert_ptr_equal((void *)after.sa_handler, (void *)test_handler);
    struct sigaction chld;
    assert_int_equal(sigaction(SIGCHLD, NULL, &chld), 0);
    assert_ptr_equal((void *)chld.sa_handler, (void *)SIG_DFL);
}

static void collect_and_interrupt(const char *line, void *arg)
{
    collect_line(line, arg);
    if (strcmp(line, "ready") == 0) kill(getpid(), SIGINT);
}

/* A launcher started with SIGINT ignored (background job, nohup) neither
 * catches it nor hands the ranks a SIGINT they would die of. */
static void test_ignored_interrupt_stays_ignored(void **state)
{
    fixture *f = *state;
    struct sigaction ign = {.sa_handler = SIG_IGN}, before, after;
    sigemptyset(&ign.sa_mask);
    assert_int_equal(sigaction(SIGINT, &ign, &before), 0);
    const char *script = "[ \"$RANK\" = 0 ] || exit 0; kill -INT $$; echo ready" TO_RESULTS "; "
                         "echo survived" TO_RESULTS;
    char *argv[] = {"/bin/sh", "-c", (char *)script, NULL};
    const char *env[] = {f->dir_env, NULL};
    lines out = {0};
    coll__launch_opts o = {.nprocs = 2,
                           .argv = argv,
                           .extra_env = env,
                           .grace_s = 0.5,
                           .on_result_line = collect_and_interrupt,
                           .arg = &out};
    coll__launch_result res;
    int rc = coll__launch(&o, &res);
    kill(getpid(), SIGINT); /* still ignored after the launch */
    assert_int_equal(sigaction(SIGINT, &before, &after), 0);
    assert_int_equal(rc, COLL_OK);
    assert_int_equal(res.exit_code, 0);
    assert_int_equal(res.interrupted_by, 0);
    assert_int_equal(out.n, 2);
    assert_string_equal(out.v[1], "survived");
    assert_ptr_equal((void *)after.sa_handler, (void *)SIG_IGN);
    lines_free(&out);
    assert_no_children();
}

/* Ranks of this very binary: see main(). */
static void test_self_exe(void **state)
{
    fixture *f = *state;
    char *argv_null[] = {NULL, "child-report", "arg1", NULL};
    char *argv_named[] = {"renamed-rank", "child-report", "arg1", NULL};
    char *const *argvs[] = {argv_null, argv_named};
    for (int i = 0; i < 2; i++) {
        lines out = {0};
        coll__launch_opts o = {.nprocs = 2,
                               .argv = argvs[i],
                               .use_self_exe = i == 1,
                               .on_result_line = collect_line,
                               .arg = &out};
        coll__launch_result res;
        assert_int_equal(coll__launch(&o, &res), COLL_OK);
        assert_no_children();
        assert_int_equal(count_open_fds(), f->fds_before);
        assert_int_equal(res.exit_code, 0);
        assert_int_equal(out.n, 1);
        char expect[256];
        snprintf(expect, sizeof expect, "rank 0 of 2 arg1 %s",
                 i == 1 ? "renamed-rank" : program_invocation_name);
        assert_string_equal(out.v[0], expect);
        lines_free(&out);
    }
}

static void test_exec_failure_is_a_launch_error(void **state)
{
    fixture *f = *state;
    char *argv[] = {"/nonexistent/collbench-rank", NULL};
    coll__launch_opts o = {.nprocs = 3, .argv = argv};
    coll__launch_result res;
    assert_int_equal(coll__launch(&o, &res), COLL_ESYS);
    assert_no_children();
    assert_int_equal(count_open_fds(), f->fds_before);
    assert_non_null(strstr(res.message, "/nonexistent/collbench-rank"));
    assert_non_null(strstr(res.message, "rank 0"));
    assert_non_null(strstr(res.message, strerror(ENOENT)));
    assert_int_not_equal(res.exit_code, 0);
}

static void test_bad_options(void **state)
{
    fixture *f = *state;
    char *argv[] = {"/bin/true", NULL};
    coll__launch_result res;
    coll__launch_opts o = {.nprocs = 0, .argv = argv};
    assert_int_equal(coll__launch(&o, &res), COLL_EINVAL);
    assert_non_null(strstr(res.message, "nprocs"));
    o.nprocs = 2;
    o.argv = NULL;
    assert_int_equal(coll__launch(&o, &res), COLL_EINVAL);
    assert_non_null(strstr(res.message, "argv"));
    const char *env[] = {"GOOD=1", "NOEQUALS", NULL};
    o.argv = argv;
    o.extra_env = env;
    assert_int_equal(coll__launch(&o, &res), COLL_EINVAL);
    assert_non_null(strstr(res.message, "NOEQUALS"));
    assert_int_equal(coll__launch(NULL, &res), COLL_EINVAL);
    assert_int_equal(coll__launch(&o, NULL), COLL_EINVAL);
    assert_no_children();
    assert_int_equal(count_open_fds(), f->fds_before);
}

/* Rank mode for test_self_exe: report what we were given through the results fd. */
static int child_report(int argc, char **argv)
{
    const char *fd = getenv(COLL_ENV_RESULTS_FD);
    const char *rank = getenv("RANK"), *world = getenv("WORLD_SIZE");
    if (!rank || !world || argc < 3) return 11;
    if (strcmp(rank, "0") != 0) return fd ? 12 : 0;
    if (!fd) return 13;
    dprintf(atoi(fd), "rank %s of %s %s %s\n", rank, world, argv[2], argv[0]);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "child-report") == 0) return child_report(argc, argv);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_token_is_64_hex_and_fresh),
        cmocka_unit_test_setup_teardown(test_all_ranks_succeed_and_see_their_env, setup, teardown),
        cmocka_unit_test_setup_teardown(test_rank0_holds_the_store_socket, setup, teardown),
        cmocka_unit_test_setup_teardown(test_failing_rank_stops_the_others, setup, teardown),
        cmocka_unit_test_setup_teardown(test_leftover_child_of_rank0_is_stopped, setup, teardown),
        cmocka_unit_test_setup_teardown(test_peers_exiting_on_their_own_are_not_signalled, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_rank_killed_by_signal, setup, teardown),
        cmocka_unit_test_setup_teardown(test_verdict_names_the_cause_not_the_first_reaped, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_result_lines_arrive_whole_and_in_order, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_interrupt_is_forwarded_and_handlers_restored, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_ignored_interrupt_stays_ignored, setup, teardown),
        cmocka_unit_test_setup_teardown(test_self_exe, setup, teardown),
        cmocka_unit_test_setup_teardown(test_exec_failure_is_a_launch_error, setup, teardown),
        cmocka_unit_test_setup_teardown(test_bad_options, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
