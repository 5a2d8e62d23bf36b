/* The job token from a file (core/token.h): first line only, owner-only files,
 * bad contents named, and $COLL_JOB_TOKEN before $COLL_JOB_TOKEN_FILE. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include "coll.h"
#include "core/token.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char path[64];

static int make_dir(void **state)
{
    (void)state;
    snprintf(path, sizeof path, "/tmp/coll-token-test.%d", (int)getpid());
    unsetenv(COLL_ENV_JOB_TOKEN_VAR);
    unsetenv(COLL_ENV_JOB_TOKEN_FILE);
    return 0;
}

static int remove_file(void **state)
{
    (void)state;
    unlink(path);
    unsetenv(COLL_ENV_JOB_TOKEN_VAR);
    unsetenv(COLL_ENV_JOB_TOKEN_FILE);
    return 0;
}

static void write_file(const char *text, mode_t mode)
{
    unlink(path);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
    assert_int_equal(chmod(path, mode), 0);
}

static void test_first_line(void **state)
{
    (void)state;
    char tok[COLL_TOKEN_HEX_LEN + 1], err[400] = "";
    write_file("s3cret-token\nignored\n", 0600);
    assert_int_equal(coll__token_read_file(path, tok, err, sizeof err), COLL_OK);
    assert_string_equal(tok, "s3cret-token");
}

static void test_others_can_read(void **state)
{
    (void)state;
    char tok[COLL_TOKEN_HEX_LEN + 1], err[400] = "";
    write_file("s3cret\n", 0644);
    assert_int_equal(coll__token_read_file(path, tok, err, sizeof err), COLL_EINVAL);
    assert_non_null(strstr(err, "chmod 600"));
    assert_non_null(strstr(err, path));
}

static void test_bad_contents(void **state)
{
    (void)state;
    char tok[COLL_TOKEN_HEX_LEN + 1], err[400] = "";
    write_file("\n", 0600);
    assert_int_equal(coll__token_read_file(path, tok, err, sizeof err), COLL_EINVAL);
    assert_non_null(strstr(err, "empty"));
    write_file("two words\n", 0600);
    assert_int_equal(coll__token_read_file(path, tok, err, sizeof err), COLL_EINVAL);
    assert_non_null(strstr(err, "without spaces"));
    char longer[80];
    memset(longer, 'a', 65);
    longer[65] = '\0';
    write_file(longer, 0600);
    assert_int_equal(coll__token_read_file(path, tok, err, sizeof err), COLL_EINVAL);
    assert_non_null(strstr(err, "longer than 64"));
    unlink(path);
    assert_int_equal(coll__token_read_file(path, tok, err, sizeof err), COLL_EINVAL);
    assert_non_null(strstr(err, "No such file"));
}

static void test_env_order(void **state)
{
    (void)state;
    char tok[COLL_TOKEN_HEX_LEN + 1], err[400] = "";
    assert_int_equal(coll__token_from_env(tok, err, sizeof err), COLL_OK);
    assert_string_equal(tok, "");
    write_file("from-file\n", 0400);
    setenv(COLL_ENV_JOB_TOKEN_FILE, path, 1);
    assert_int_equal(coll__token_from_env(tok, err, sizeof err), COLL_OK);
    assert_string_equal(tok, "from-file");
    /* A launcher hands its ranks COLL_JOB_TOKEN: it wins over an inherited file. */
    setenv(COLL_ENV_JOB_TOKEN_VAR, "from-launcher", 1);
    assert_int_equal(coll__token_from_env(tok, err, sizeof err), COLL_OK);
    assert_string_equal(tok, "from-launcher");
}

/* coll_config.job_token (the torch backend's per-group token) wins over the
 * environment, and is checked like it. */
static void test_config_token(void **state)
{
    (void)state;
    char tok[COLL_TOKEN_HEX_LEN + 1], err[400] = "";
    setenv(COLL_ENV_JOB_TOKEN_VAR, "from-env", 1);
    assert_int_equal(coll__token_from_config("from-config", tok, err, sizeof err), COLL_OK);
    assert_string_equal(tok, "from-config");
    assert_int_equal(coll__token_from_config(NULL, tok, err, sizeof err), COLL_OK);
    assert_string_equal(tok, "from-env");
    assert_int_equal(coll__token_from_config("has space", tok, err, sizeof err), COLL_EINVAL);
    assert_non_null(strstr(err, "coll_config.job_token"));
}

int main(void)
{
#define T(fn) cmocka_unit_test_setup_teardown(fn, make_dir, remove_file)
    const struct CMUnitTest tests[] = {
        T(test_first_line), T(test_others_can_read), T(test_bad_contents),
        T(test_env_order),  T(test_config_token),
    };
#undef T
    return cmocka_run_group_tests(tests, NULL, NULL);
}
