/* Strangers cannot starve the store (issue 27, item 1): a member that
 * connects while more strangers wait to authenticate than the server keeps
 * gets in (the longest-waiting stranger is evicted, and a member evicted
 * mid-handshake reconnects); a server out of descriptors evicts instead of
 * spinning; a wrong token is still refused at once, not retried. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "bootstrap/store.h"
#include "coll.h"
#include "core/clock.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#define TOKEN "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
#define WRONG "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdee"
#define MAX_IDLE 1100 /* more than the server keeps waiting (1,024 at most) */

static int idle[MAX_IDLE];
static pid_t server_child = -1;

/* Connects without saying anything; -1 when the connection failed. */
static int stranger(int port)
{
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    inet_pton(AF_INET, "127.0.0.1", &sa.sin_addr);
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd >= 0 && connect(fd, (struct sockaddr *)&sa, sizeof sa) < 0) {
        close(fd);
        fd = -1;
    }
    return fd;
}

static int open_strangers(int port, int n)
{
    int opened = 0;
    for (int i = 0; i < n; i++)
        if ((idle[i] = stranger(port)) >= 0) opened++;
    return opened;
}

static void close_strangers(int n)
{
    for (int i = 0; i < n; i++)
        if (idle[i] >= 0) close(idle[i]);
}

static int store_create(int port, int is_server, const char *token, coll__store **out,
                        coll__err *err)
{
    return coll__tcp_store_create("127.0.0.1", port, is_server, -1, token, 10, out, err);
}

/* How many strangers this process can hold beside the server's own copies. */
static int strangers_fit(void)
{
    struct rlimit rl;
    assert_int_equal(getrlimit(RLIMIT_NOFILE, &rl), 0);
    if (rl.rlim_cur < 4096 && rl.rlim_max > rl.rlim_cur) {
        rl.rlim_cur = rl.rlim_max < 4096 ? rl.rlim_max : 4096;
        setrlimit(RLIMIT_NOFILE, &rl);
        getrlimit(RLIMIT_NOFILE, &rl);
    }
    /* the server keeps at most a quarter of the limit waiting */
    long n = (long)rl.rlim_cur / 4 + 64;
    assert_true(2 * n + 64 < (long)rl.rlim_cur);
    return n > MAX_IDLE ? MAX_IDLE : (int)n;
}

static void test_member_gets_in_past_idle_strangers(void **state)
{
    (void)state;
    coll__err err = {.rank = -1};
    coll__store *srv = NULL, *member = NULL;
    assert_int_equal(store_create(0, 1, TOKEN, &srv, &err), COLL_OK);
    int port = coll__tcp_store_port(srv);
    int n = strangers_fit();
    assert_int_equal(open_strangers(port, n), n);
    double t0 = coll__now_s();
    int rc = store_create(port, 0, TOKEN, &member, &err);
    if (rc) fprintf(stderr, "member: %s\n", err.msg);
    assert_int_equal(rc, COLL_OK);
    double delay = coll__now_s() - t0;
    fprintf(stderr, "a member got in past %d idle strangers in %.3f s\n", n, delay);
    assert_true(delay < 5.0);
    assert_int_equal(coll__store_set(member, "k", "v", 1), COLL_OK);
    void *v = NULL;
    assert_int_equal(coll__store_get(srv, "k", &v, NULL), COLL_OK);
    free(v);
    coll__store_destroy(member);
    close_strangers(n);
    coll__store_destroy(srv);
}

/* The refusal of a wrong token is final at once: the client does not retry it
 * as it retries an eviction, for the whole of its timeout. */
static void test_wrong_token_refused_at_once(void **state)
{
    (void)state;
    coll__err err = {.rank = -1};
    coll__store *srv = NULL, *member = NULL;
    assert_int_equal(store_create(0, 1, TOKEN, &srv, &err), COLL_OK);
    double t0 = coll__now_s();
    assert_int_equal(store_create(coll__tcp_store_port(srv), 0, WRONG, &member, &err), COLL_EAUTH);
    assert_true(coll__now_s() - t0 < 2.0);
    assert_non_null(strstr(err.msg, "refused our job token"));
    coll__store_destroy(srv);
}

/* A server with few descriptors left: strangers take the last ones, and the
 * member's connection must still be accepted (the oldest stranger evicted),
 * not left in the backlog while the server spins on EMFILE. The server runs
 * in a child whose descriptor limit is 64. */
static void test_server_out_of_descriptors(void **state)
{
    (void)state;
    int ready[2], done[2];
    assert_int_equal(pipe(ready), 0);
    assert_int_equal(pipe(done), 0);
    pid_t pid = server_child = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        alarm(60); /* whatever happens to the parent */
        struct rlimit rl = {64, 64};
        coll__err err = {.rank = -1};
        coll__store *srv = NULL;
        if (setrlimit(RLIMIT_NOFILE, &rl) || store_create(0, 1, TOKEN, &srv, &err)) _exit(10);
        /* leave about 8 free descriptors: the server's quarter (16) does not fit */
        while (open("/dev/null", O_RDONLY | O_CLOEXEC) >= 0) {
        }
        for (int i = 0; i < 8; i++) close(63 - i);
        int port = coll__tcp_store_port(srv);
        if (write(ready[1], &port, sizeof port) != sizeof port) _exit(11);
        char b;
        (void)!read(done[0], &b, 1);
        coll__store_destroy(srv);
        _exit(0);
    }
    int port = 0;
    assert_int_equal(read(ready[0], &port, sizeof port), sizeof port);
    int n = open_strangers(port, 40);
    assert_true(n >= 30);
    coll__err err = {.rank = -1};
    coll__store *member = NULL;
    double t0 = coll__now_s();
    int rc = store_create(port, 0, TOKEN, &member, &err);
    if (rc) fprintf(stderr, "member: %s\n", err.msg);
    assert_int_equal(rc, COLL_OK);
    assert_true(coll__now_s() - t0 < 5.0);
    assert_int_equal(coll__store_set(member, "k", "v", 1), COLL_OK);
    coll__store_destroy(member);
    close_strangers(40);
    assert_int_equal(write(done[1], "x", 1), 1);
    int status;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    server_child = -1;
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
    close(ready[0]);
    close(ready[1]);
    close(done[0]);
    close(done[1]);
}

/* A failed check leaves the test early: the child must not outlive it. */
static int kill_server_child(void **state)
{
    (void)state;
    if (server_child > 0) {
        kill(server_child, SIGKILL);
        waitpid(server_child, NULL, 0);
        server_child = -1;
    }
    return 0;
}

int main(void)
{
    signal(SIGPIPE, SIG_IGN);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_member_gets_in_past_idle_strangers),
        cmocka_unit_test(test_wrong_token_refused_at_once),
        cmocka_unit_test_teardown(test_server_out_of_descriptors, kill_server_child),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
