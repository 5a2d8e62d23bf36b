/* The tuning file (core/tuning_file.h, src/backend/tuning_load.c): the
 * environment above it and the defaults below it; another machine's file
 * ignored with a message naming the difference; a malformed one refused
 * whole, naming its line; a missing one the defaults, silently. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backend/backends.h"
#include "coll.h"
#include "coll_tool.h"
#include "core/machine_id.h"
#include "core/tuning.h"
#include "core/tuning_file.h"

static const coll__tunable *row_named(const char *name)
{
    const coll__tunable *t;
    for (size_t i = 0; (t = coll_tuning_row(i)) != NULL; i++)
        if (strcmp(t->name, name) == 0) return t;
    return NULL;
}

static const coll__tunable *find(const char *name, void *arg)
{
    (void)arg;
    return row_named(name);
}

/* This machine's block, then body. */
static void write_file(const char *path, const char *cpu, const char *kernel, const char *body)
{
    coll__machine_id m;
    coll__machine_id_here(&m);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fprintf(f,
            "# collbench tuning v1\nmachine.cpu = %s\nmachine.flags = %s\nmachine.kernel = %s\n"
            "machine.cores = 2\nmachine.copy_gbps = 5.1\n%s",
            cpu ? cpu : m.cpu, m.flags, kernel ? kernel : m.kernel, body);
    fclose(f);
}

static char tmp_path[256];

static int setup(void **state)
{
    (void)state;
    snprintf(tmp_path, sizeof tmp_path, "/tmp/coll-tuning-test.%d", (int)getpid());
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    unlink(tmp_path);
    coll__tunable_layer_install(NULL);
    unsetenv("COLL_SHM_CHUNK_BYTES");
    return 0;
}

static void env_over_file_over_default(void **state)
{
    (void)state;
    static coll__tuning_values v;
    char msg[1024];
    const coll__tunable *chunk = row_named("COLL_SHM_CHUNK_BYTES");
    const coll__tunable *slot = row_named("COLL_SHM_SLOT_BYTES");
    assert_non_null(chunk);
    write_file(tmp_path, NULL, NULL, "COLL_SHM_CHUNK_BYTES = 1M  # measured: a note\n");
    assert_int_equal(coll__tuning_load(tmp_path, &v, msg, sizeof msg), COLL_TUNING_FILE_APPLIED);
    assert_string_equal(msg, "");
    coll__tunable_layer_install(&v);
    uint64_t got;
    coll__err err;
    coll__err_init(&err, NULL, 0);
    unsetenv("COLL_SHM_CHUNK_BYTES");
    assert_int_equal(coll__tunable_read(chunk, 2, 0, &got, &err), COLL_OK);
    assert_int_equal(got, COLL__MIB); /* the file's, not the default 256K */
    assert_string_equal(coll__tunable_source(chunk), "file");
    setenv("COLL_SHM_CHUNK_BYTES", "128K", 1);
    assert_int_equal(coll__tunable_read(chunk, 2, 0, &got, &err), COLL_OK);
    assert_int_equal(got, 128 * COLL__KIB); /* the environment's */
    assert_string_equal(coll__tunable_source(chunk), "env");
    /* a variable the file does not name: its default */
    assert_int_equal(coll__tunable_read(slot, 2, 0, &got, &err), COLL_OK);
    assert_int_equal(got, slot->dflt);
    assert_string_equal(coll__tunable_source(slot), "default");
    coll__tunable_layer_install(NULL);
    unsetenv("COLL_SHM_CHUNK_BYTES");
    assert_int_equal(coll__tunable_read(chunk, 2, 0, &got, &err), COLL_OK);
    assert_int_equal(got, chunk->dflt);
}

/* A value tune measured with more ranks than cores (or at 2 ranks) replaces
 * the default there only; the environment holds everywhere. */
static void file_value_holds_where_its_default_does(void **state)
{
    (void)state;
    static coll__tuning_values v;
    char msg[1024];
    const coll__tunable *plain = row_named("COLL_SHM_PRIV_PLAIN_MAX");
    const coll__tunable *whole = row_named("COLL_SHM_CMA_WHOLE_MAX");
    const coll__tunable *core = row_named("COLL_SHM_PRIV_CORE_MAX"); /* 4M, a core per rank */
    assert_non_null(plain);
    assert_non_null(whole);
    assert_non_null(core);
    write_file(tmp_path, NULL, NULL,
               "COLL_SHM_PRIV_PLAIN_MAX = 1M\nCOLL_SHM_CMA_WHOLE_MAX = 1M\n"
               "COLL_SHM_PRIV_CORE_MAX = 8M\n");
    assert_int_equal(coll__tuning_load(tmp_path, &v, msg, sizeof msg), COLL_TUNING_FILE_APPLIED);
    coll__tunable_layer_install(&v);
    uint64_t got;
    coll__err err;
    coll__err_init(&err, NULL, 0);
    unsetenv("COLL_SHM_PRIV_PLAIN_MAX");
    assert_int_equal(coll__tunable_read(plain, 4, 1, &got, &err), COLL_OK);
    assert_int_equal(got, COLL__MIB); /* 4 ranks on fewer cores: the file's */
    assert_int_equal(coll__tunable_read(plain, 2, 0, &got, &err), COLL_OK);
    assert_int_equal(got, 0); /* a core per rank: no window, as by default */
    assert_int_equal(coll__tunable_read(whole, 2, 0, &got, &err), COLL_OK);
    assert_int_equal(got, COLL__MIB);
    assert_int_equal(coll__tunable_read(whole, 4, 1, &got, &err), COLL_OK);
    assert_int_equal(got, 0);
    assert_int_equal(coll__tunable_read(core, 2, 0, &got, &err), COLL_OK);
    assert_int_equal(got, 8 * COLL__MIB); /* a core per rank: the file's */
    assert_int_equal(coll__tunable_read(core, 4, 1, &got, &err), COLL_OK);
    assert_int_equal(got, 0); /* more ranks than cores: not where it was measured */
    setenv("COLL_SHM_PRIV_PLAIN_MAX", "2M", 1);
    assert_int_equal(coll__tunable_read(plain, 2, 0, &got, &err), COLL_OK);
    assert_int_equal(got, 2 * COLL__MIB); /* the user's word, everywhere */
    unsetenv("COLL_SHM_PRIV_PLAIN_MAX");
}

static void foreign_machine_is_ignored_with_the_difference_named(void **state)
{
    (void)state;
    static coll__tuning_values v;
    char msg[1024];
    write_file(tmp_path, "Some Other CPU 9000", NULL, "COLL_SHM_CHUNK_BYTES = 1M\n");
    assert_int_equal(coll__tuning_load(tmp_path, &v, msg, sizeof msg), COLL_TUNING_FILE_FOREIGN);
    assert_non_null(strstr(msg, "CPU model"));
    assert_non_null(strstr(msg, "Some Other CPU 9000"));
    assert_int_equal(v.count, 0);
    write_file(tmp_path, NULL, "0.0.1-other", "COLL_SHM_CHUNK_BYTES = 1M\n");
    assert_int_equal(coll__tuning_load(tmp_path, &v, msg, sizeof msg), COLL_TUNING_FILE_FOREIGN);
    assert_non_null(strstr(msg, "kernel"));
    assert_non_null(strstr(msg, "0.0.1-other"));
}

/* body's bad line is the file's line 7 (six lines of header and machine). */
static void refused(const char *body, const char *line, const char *what)
{
    static coll__tuning_values v;
    char msg[1024];
    write_file(tmp_path, NULL, NULL, body);
    assert_int_equal(coll__tuning_load(tmp_path, &v, msg, sizeof msg), COLL_TUNING_FILE_REFUSED);
    char want[300];
    snprintf(want, sizeof want, "%s:%s:", tmp_path, line);
    if (!strstr(msg, want) || !strstr(msg, what))
        fail_msg("'%s' lacks '%s' or '%s'", msg, want, what);
    assert_int_equal(v.count, 0); /* never half-applied */
}

static void malformed_is_refused_naming_the_line(void **state)
{
    (void)state;
    refused("COLL_SHM_CHUNK_BYTES = 1M\nCOLL_NO_SUCH_KNOB = 3\n", "8", "COLL_NO_SUCH_KNOB");
    refused("COLL_SHM_CHUNK_BYTES = lots\n", "7", "COLL_SHM_CHUNK_BYTES");
    refused("COLL_SHM_CMA = 2\n", "7", "0 or 1");
    refused("COLL_SHM_CHUNK_BYTES = 1M\n\n# a comment\njust some words\n", "10", "not 'NAME");
    refused("COLL_SHM_CHUNK_BYTES = 1M\nCOLL_SHM_CHUNK_BYTES = 2M\n", "8", "twice");
    refused("machine.colour = blue\n", "7", "machine.colour");

    static coll__tuning_values v;
    coll__err err;
    coll__err_init(&err, NULL, 0);
    assert_int_equal(coll__tuning_parse("# collbench tuning v2\n", "F", find, NULL, &v, &err),
                     COLL_EINVAL);
    assert_non_null(strstr(err.msg, "F:1: version 2"));
    assert_int_equal(coll__tuning_parse("COLL_SHM_CMA = 0\n", "F", find, NULL, &v, &err),
                     COLL_EINVAL);
    assert_non_null(strstr(err.msg, "F:1: not a collbench tuning file"));
}

static void missing_file_is_the_defaults_silently(void **state)
{
    (void)state;
    static coll__tuning_values v;
    char msg[64] = "x";
    assert_int_equal(coll__tuning_load("/nonexistent/dir/tuning", &v, msg, sizeof msg),
                     COLL_TUNING_FILE_NONE);
    assert_string_equal(msg, "");
}

static void path_follows_the_documented_order(void **state)
{
    (void)state;
    char p[512];
    setenv("COLL_TUNING_FILE", "/x/y", 1);
    setenv("XDG_CONFIG_HOME", "/cfg", 1);
    assert_int_equal(coll__tuning_file_path(p, sizeof p), 0);
    assert_string_equal(p, "/x/y");
    unsetenv("COLL_TUNING_FILE");
    assert_int_equal(coll__tuning_file_path(p, sizeof p), 0);
    assert_string_equal(p, "/cfg/collbench/tuning");
    unsetenv("XDG_CONFIG_HOME");
    setenv("HOME", "/home/u", 1);
    assert_int_equal(coll__tuning_file_path(p, sizeof p), 0);
    assert_string_equal(p, "/home/u/.config/collbench/tuning");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(env_over_file_over_default, setup, teardown),
        cmocka_unit_test_setup_teardown(file_value_holds_where_its_default_does, setup, teardown),
        cmocka_unit_test_setup_teardown(foreign_machine_is_ignored_with_the_difference_named, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(malformed_is_refused_naming_the_line, setup, teardown),
        cmocka_unit_test_setup_teardown(missing_file_is_the_defaults_silently, setup, teardown),
        cmocka_unit_test(path_follows_the_documented_order),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
