/* Small multiples (report_grid.h): at most REPORT_GRID_MAX_LINES lines a
 * panel, every series in exactly one panel, a panel holds one machine and
 * process count; one colour per backend and one marker per buffer kind. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "report/report_data.h"
#include "report/report_grid.h"
#include "report/report_plot.h"
#include "report/report_view.h"

static void add(report_data *d, const char *host, const char *backend, const char *buffers,
                int nprocs)
{
    bench_row r;
    memset(&r, 0, sizeof r);
    snprintf(r.host, sizeof r.host, "%s", host);
    snprintf(r.collective, sizeof r.collective, "allreduce");
    snprintf(r.backend, sizeof r.backend, "%s", backend);
    snprintf(r.device, sizeof r.device, "%s", strcmp(host, "gpubox") ? "cpu" : "cuda");
    snprintf(r.buffers, sizeof r.buffers, "%s", buffers);
    snprintf(r.dtype, sizeof r.dtype, "float32");
    snprintf(r.op, sizeof r.op, "sum");
    r.nprocs = nprocs;
    r.nnodes = 1;
    r.bytes = 1 << 20;
    r.time_us_avg = r.time_us_p50 = 100;
    assert_int_equal(report_add_comm(d, &r), 0);
}

/* Every series once, no panel over the limit, one machine and process count a panel. */
static size_t check_grid(const report_view *v, const report_grid *g)
{
    size_t seen = 0, widest = 0;
    for (size_t i = 0; i < g->n; i++) {
        const grid_panel *p = &g->p[i];
        assert_true(p->n >= 1 && p->n <= REPORT_GRID_MAX_LINES);
        assert_true(p->col < REPORT_GRID_MAX_COLS && p->row < g->nrows);
        if (p->n > widest) widest = p->n;
        for (size_t k = 0; k < p->n; k++) {
            assert_int_equal(p->s[k]->nprocs, p->s[0]->nprocs);
            assert_string_equal(p->s[k]->host, p->s[0]->host);
            for (size_t j = 0; j < g->n; j++)
                for (size_t m = 0; m < g->p[j].n; m++)
                    if (j != i || m != k) assert_ptr_not_equal(g->p[j].s[m], p->s[k]);
        }
        seen += p->n;
    }
    assert_int_equal(seen, v->n);
    return widest;
}

static void build(report_data *d, report_view *v, report_grid *g)
{
    report_sort_dedup(d);
    assert_int_equal(report_view_build(d, v), 0);
    assert_int_equal(report_grid_build(v, "allreduce", g), 0);
}

static void release(report_data *d, report_view *v, report_grid *g)
{
    report_grid_free(g);
    report_view_free(v);
    report_data_free(d);
}

/* `collbench suite --quick`: 5 backends, shm and auto also on coll buffers,
 * 2 and 4 processes: one panel per process count, 7 lines each, one row. */
static void test_quick_run_shape(void **state)
{
    (void)state;
    static const char *const be[] = {"tcp", "shm", "auto", "mpi", "gloo"};
    report_data d = {0};
    for (int p = 2; p <= 4; p += 2)
        for (int b = 0; b < 5; b++) {
            add(&d, "vm", be[b], "malloc", p);
            if (b == 1 || b == 2) add(&d, "vm", be[b], "coll", p);
        }
    report_view v;
    report_grid g;
    build(&d, &v, &g);
    assert_int_equal(g.n, 2);
    assert_int_equal(g.nrows, 1);
    assert_int_equal(g.ncols, 2);
    assert_int_equal(check_grid(&v, &g), 7);
    assert_string_equal(g.p[0].title, "2 processes");
    assert_string_equal(g.p[1].title, "4 processes");
    assert_string_equal(g.p[0].row_title, "");
    assert_int_equal(g.nbackends, 5);
    assert_int_equal(g.nbuffers, 2);
    release(&d, &v, &g);
}

/* 3 machines x 6 backends x 2 buffer kinds x 3 process counts: 12 lines a
 * machine and process count, so each machine's panels split by buffer kind. */
static void test_three_machines_six_backends(void **state)
{
    (void)state;
    static const char *const be[] = {"tcp", "shm", "auto", "mpi", "nccl", "gloo"};
    static const char *const hosts[] = {"cpubox", "gpubox", "cpubox2"};
    report_data d = {0};
    for (int h = 0; h < 3; h++)
        for (int p = 2; p <= 6; p += 2)
            for (int b = 0; b < 6; b++) {
                add(&d, hosts[h], be[b], h == 1 ? "cuda" : "malloc", p);
                add(&d, hosts[h], be[b], "coll", p);
            }
    report_view v;
    report_grid g;
    build(&d, &v, &g);
    assert_int_equal(check_grid(&v, &g), 6);
    assert_int_equal(g.n, 3 * 2 * 3);
    assert_int_equal(g.nrows, 6);
    assert_int_equal(g.ncols, 3);
    int titled = 0;
    for (size_t i = 0; i < g.n; i++)
        titled += !strcmp(g.p[i].row_title, "cpubox2, cpu, coll buffers") &&
                  !strcmp(g.p[i].title, "4 processes");
    assert_int_equal(titled, 1);
    release(&d, &v, &g);
}

/* More backends than a panel holds: chunks of 8, wrapped at 3 columns. */
static void test_many_backends_chunked(void **state)
{
    (void)state;
    report_data d = {0};
    char name[16];
    for (int b = 0; b < 10; b++) {
        snprintf(name, sizeof name, "be%d", b);
        for (int p = 1; p <= 4; p++) add(&d, "vm", name, "malloc", p);
    }
    report_view v;
    report_grid g;
    build(&d, &v, &g);
    assert_int_equal(check_grid(&v, &g), 8);
    assert_int_equal(g.n, 8); /* 4 process counts x (8 + 2) */
    assert_int_equal(g.ncols, 3);
    assert_int_equal(g.nrows, 3);
    release(&d, &v, &g);
}

static void test_one_colour_per_backend_one_marker_per_buffer_kind(void **state)
{
    (void)state;
    static const char *const be[] = {"tcp", "shm", "auto", "mpi", "nccl", "gloo"};
    for (int i = 0; i < 6; i++)
        for (int j = 0; j < i; j++) {
            assert_int_not_equal(report_plot_backend_colour(be[i]),
                                 report_plot_backend_colour(be[j]));
            assert_string_not_equal(report_plot_backend_css(be[i]), report_plot_backend_css(be[j]));
        }
    assert_int_equal(report_plot_backend_colour("shm"), report_plot_backend_colour("shm"));
    assert_string_not_equal(report_plot_buffers_marker("malloc"),
                            report_plot_buffers_marker("coll"));
    assert_string_not_equal(report_plot_buffers_marker("coll"), report_plot_buffers_marker("cuda"));
    assert_string_not_equal(report_plot_buffers_marker("malloc"),
                            report_plot_buffers_marker("cuda"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_quick_run_shape),
        cmocka_unit_test(test_three_machines_six_backends),
        cmocka_unit_test(test_many_backends_chunked),
        cmocka_unit_test(test_one_colour_per_backend_one_marker_per_buffer_kind),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
