/* host:port text for both families (core/hostport.h), and the listen address
 * following an IPv6 store host (bootstrap/listen_addr.h). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include "bootstrap/listen_addr.h"
#include "core/hostport.h"

#include <stdlib.h>
#include <string.h>

static void parses(const char *s, const char *host, int port)
{
    char h[64], err[200];
    int p = -1;
    int rc = coll__hostport_parse(s, h, sizeof h, &p, err, sizeof err);
    if (rc) fail_msg("'%s' refused: %s", s, err);
    assert_string_equal(h, host);
    assert_int_equal(p, port);
}

/* Refused, with err containing why. */
static void refuses(const char *s, const char *why)
{
    char h[64] = "untouched", err[200] = "";
    int p = -1;
    assert_int_equal(coll__hostport_parse(s, h, sizeof h, &p, err, sizeof err), COLL_EINVAL);
    if (!strstr(err, why)) fail_msg("'%s': message '%s' does not say '%s'", s, err, why);
    assert_string_equal(h, "untouched");
    assert_int_equal(p, -1);
}

static void test_parse_forms(void **state)
{
    (void)state;
    parses("10.0.0.1:29500", "10.0.0.1", 29500);
    parses("node-7.example:1", "node-7.example", 1);
    parses("[fd00::1]:29500", "fd00::1", 29500);
    parses("[::1]:65535", "::1", 65535);
    parses("[fe80::1%eth0]:80", "fe80::1%eth0", 80);
}

static void test_parse_refusals(void **state)
{
    (void)state;
    refuses("fd00::1:29500", "needs brackets");
    refuses("::1", "needs brackets");
    refuses("[fd00::1:29500", "without a closing ']'");
    refuses("[fd00::1]29500", "expected ':port' after ']'");
    refuses("[fd00::1]", "expected ':port' after ']'");
    refuses("fd00::1]:29500", "needs brackets");
    refuses("[]:29500", "empty host");
    refuses(":29500", "empty host");
    refuses("host", "expected host:port");
    refuses("host:", "not a number");
    refuses("host:0", "not a number in 1..65535");
    refuses("host:65536", "not a number in 1..65535");
    refuses("host:-1", "not a number");
    refuses("host:+80", "not a number");
    refuses("host:80x", "not a number");
    refuses("[fd00::1]:http", "not a number");
}

static void test_host_too_long(void **state)
{
    (void)state;
    char h[8], err[200];
    int p;
    assert_int_equal(coll__hostport_parse("[fd00:1:2:3::1]:80", h, sizeof h, &p, err, sizeof err),
                     COLL_EINVAL);
    assert_non_null(strstr(err, "longer than 7"));
}

static void test_format_round_trip(void **state)
{
    (void)state;
    const char *hosts[] = {"10.1.2.3", "fd00::1", "::1", "name.example", "fe80::1%veth0"};
    const char *want[] = {"10.1.2.3:7", "[fd00::1]:7", "[::1]:7", "name.example:7",
                          "[fe80::1%veth0]:7"};
    for (size_t i = 0; i < sizeof hosts / sizeof *hosts; i++) {
        char buf[80];
        assert_int_equal(coll__hostport_format(buf, sizeof buf, hosts[i], 7), (int)strlen(want[i]));
        assert_string_equal(buf, want[i]);
        parses(buf, hosts[i], 7);
    }
    char buf[80];
    coll__hostport_format(buf, sizeof buf, "[fd00::1]", 9); /* already bracketed */
    assert_string_equal(buf, "[fd00::1]:9");
}

static void test_unbracket(void **state)
{
    (void)state;
    char out[64];
    coll__host_unbracket("[fd00::1]", out, sizeof out);
    assert_string_equal(out, "fd00::1");
    coll__host_unbracket("fd00::1", out, sizeof out);
    assert_string_equal(out, "fd00::1");
    coll__host_unbracket("[x", out, sizeof out);
    assert_string_equal(out, "[x");
}

/* An IPv6 store on loopback keeps the job's transports on IPv6 loopback. */
static void test_listen_follows_ipv6_store(void **state)
{
    (void)state;
    unsetenv("COLL_LISTEN_ADDR");
    unsetenv("COLL_SOCKET_IFNAME");
    coll_listen_pick p;
    char err[400];
    assert_int_equal(coll__listen_addr_pick("::1", 1, &p, err, sizeof err), 0);
    assert_string_equal(p.addr, "::1");
    assert_int_equal(coll__listen_addr_pick("::1", 0, &p, err, sizeof err), 0);
    assert_string_equal(p.addr, "::1");
    assert_int_equal(coll__listen_addr_pick("127.0.0.1", 0, &p, err, sizeof err), 0);
    assert_string_equal(p.addr, "127.0.0.1");
    assert_true(coll_host_is_loopback("[::1]"));
    /* COLL_LISTEN_ADDR as an IPv6 literal, bracketed or not */
    setenv("COLL_LISTEN_ADDR", "[fd00::5]", 1);
    assert_int_equal(coll__listen_addr_pick(NULL, 1, &p, err, sizeof err), 0);
    assert_string_equal(p.addr, "fd00::5");
    unsetenv("COLL_LISTEN_ADDR");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse_forms),   cmocka_unit_test(test_parse_refusals),
        cmocka_unit_test(test_host_too_long), cmocka_unit_test(test_format_round_trip),
        cmocka_unit_test(test_unbracket),     cmocka_unit_test(test_listen_follows_ipv6_store),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
