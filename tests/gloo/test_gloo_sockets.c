/* The gloo backend's table of this process's TCP sockets (gloo_sockets.h),
 * read from /proc: /proc/net's address form, and real sockets (a listener
 * and both ends of a connection on loopback) found with the addresses the
 * kernel gives them. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "backend/gloo/gloo_sockets.h"

static void proc_net_form(void **state)
{
    (void)state;
    char buf[64];
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    assert_int_equal(coll__proc_net_addr("0100007F:1F90", buf, sizeof buf), 0);
    assert_string_equal(buf, "[127.0.0.1]:8080");
    assert_int_equal(coll__proc_net_addr("00000000000000000000000001000000:0050", buf, sizeof buf),
                     0);
    assert_string_equal(buf, "[::1]:80");
    assert_int_equal(coll__proc_net_addr("0000000000000000FFFF00000100007F:D431", buf, sizeof buf),
                     0);
    assert_string_equal(buf, "[::ffff:127.0.0.1]:54321");
#endif
    assert_int_equal(coll__proc_net_addr("00000000:0000", buf, sizeof buf), 0);
    assert_string_equal(buf, "[0.0.0.0]:0");
    const char *bad[] = {"",
                         "0100007F",
                         "0100007F:",
                         "0100007F:10000",
                         "100007F:1F90",
                         "0100007G:1F90",
                         "0100007F0:1F90",
                         "0100007F:zz"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        assert_int_equal(coll__proc_net_addr(bad[i], buf, sizeof buf), -1);
    assert_int_equal(coll__proc_net_addr("0100007F:1F90", buf, 8), -1); /* no room */
}

static void name_of(int fd, int peer, char *buf, size_t len)
{
    struct sockaddr_in a;
    socklen_t l = sizeof a;
    assert_int_equal(peer ? getpeername(fd, (struct sockaddr *)&a, &l)
                          : getsockname(fd, (struct sockaddr *)&a, &l),
                     0);
    char ip[INET_ADDRSTRLEN];
    inet_ntop(AF_INET, &a.sin_addr, ip, sizeof ip);
    snprintf(buf, len, "[%s]:%d", ip, ntohs(a.sin_port));
}

static const coll__own_socket *find(const coll__own_socket *v, int n, int fd)
{
    for (int i = 0; i < n; i++)
        if (v[i].fd == fd) return &v[i];
    return NULL;
}

static void real_sockets(void **state)
{
    (void)state;
    int lis = socket(AF_INET, SOCK_STREAM, 0), cli = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t l = sizeof a;
    assert_true(lis >= 0 && cli >= 0);
    assert_int_equal(bind(lis, (struct sockaddr *)&a, sizeof a), 0);
    assert_int_equal(listen(lis, 1), 0);
    assert_int_equal(getsockname(lis, (struct sockaddr *)&a, &l), 0);
    assert_int_equal(connect(cli, (struct sockaddr *)&a, sizeof a), 0);
    int srv = accept(lis, NULL, NULL);
    assert_true(srv >= 0);

    coll__own_socket *v = NULL;
    int n = coll__own_sockets(&v);
    assert_true(n >= 3);
    int fds[] = {lis, cli, srv};
    for (int i = 0; i < 3; i++) {
        const coll__own_socket *s = find(v, n, fds[i]);
        char want[64];
        assert_non_null(s);
        name_of(fds[i], 0, want, sizeof want);
        assert_string_equal(s->local, want);
        if (fds[i] == lis) {
            assert_string_equal(s->peer, "[0.0.0.0]:0");
        } else {
            name_of(fds[i], 1, want, sizeof want);
            assert_string_equal(s->peer, want);
        }
    }
    free(v);
    close(srv);
    close(cli);
    close(lis);
    /* closed: no longer listed */
    n = coll__own_sockets(&v);
    assert_true(n >= 0);
    for (int i = 0; i < 3; i++) assert_null(find(v, n, fds[i]));
    free(v);
}

/* A table whose rows come twice (the kernel prints it in pieces, and a row
 * that moves between two reads comes again): each descriptor once. */
static void rows_twice(void **state)
{
    (void)state;
    int lis = socket(AF_INET, SOCK_STREAM, 0), dup_fd = dup(lis);
    struct stat st;
    assert_true(lis >= 0 && dup_fd >= 0);
    assert_int_equal(fstat(lis, &st), 0);
    char path[] = "/tmp/collbench-tcp.XXXXXX";
    int tfd = mkstemp(path);
    assert_true(tfd >= 0);
    FILE *f = fdopen(tfd, "w");
    fprintf(f, "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt"
               "   uid  timeout inode\n");
    for (int i = 0; i < 5; i++)
        fprintf(f,
                "   %d: 0100007F:1F90 00000000:0000 0A 00000000:00000000 00:00000000 00000000"
                "     0        0 %lu 1 0000000000000000 100 0 0 10 0\n",
                i, (unsigned long)st.st_ino);
    fclose(f);
    const char *tables[] = {path, "/nonexistent/tcp6", NULL};
    coll__own_socket *v = NULL;
    int n = coll__own_sockets_in(tables, &v);
    unlink(path);
    assert_int_equal(n, 2); /* lis and its dup, each once */
    assert_true((v[0].fd == lis && v[1].fd == dup_fd) || (v[0].fd == dup_fd && v[1].fd == lis));
    free(v);
    close(dup_fd);
    close(lis);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(proc_net_form),
        cmocka_unit_test(real_sockets),
        cmocka_unit_test(rows_twice),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
