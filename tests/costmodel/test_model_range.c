/* What of a prediction lies beyond the rows (src/costmodel/model_range.c): hosts,
 * ranks, sizes and the link outside the measured range are named, a cluster
 * inside it gives nothing, and a short buffer is cut, not overrun. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "costmodel/model_range.h"

/* Rows at 1 host x 2 and 2 hosts x 1, 2, sizes 64K and 64M. */
static void rows(model_series *s, model_point *pts)
{
    memset(s, 0, sizeof *s);
    s->pts = pts;
    const int shape[3][2] = {{1, 2}, {2, 1}, {2, 2}};
    for (int k = 0; k < 3; k++)
        for (int z = 0; z < 2; z++)
            pts[s->npts++] = (model_point){.hosts = shape[k][0],
                                           .per_host = shape[k][1],
                                           .bytes = z ? 64.0 * 1048576 : 65536,
                                           .measured_us = 1};
}

static model_cluster cluster(const char *spec)
{
    model_cluster c;
    char err[256];
    assert_int_equal(model_cluster_parse(spec, &c, err, sizeof err), 0);
    return c;
}

static void test_span(void **state)
{
    (void)state;
    model_series s;
    model_point pts[6];
    rows(&s, pts);
    model_span sp;
    model_series_span(&s, &sp);
    assert_int_equal(sp.max_hosts, 2);
    assert_int_equal(sp.max_per_host, 2);
    assert_int_equal(sp.max_ranks, 4);
    assert_true(sp.min_bytes == 65536);
    assert_true(sp.max_bytes == 64.0 * 1048576);
}

static void test_beyond(void **state)
{
    (void)state;
    model_series s;
    model_point pts[6];
    rows(&s, pts);
    char buf[512];
    model_cluster c = cluster("hosts=2,ranks-per-host=1");
    assert_int_equal(model_beyond(&s, &c, 65536, 1048576, buf, sizeof buf), 0);
    assert_string_equal(buf, "");

    c = cluster("hosts=4");
    assert_int_equal(model_beyond(&s, &c, 65536, 1048576, buf, sizeof buf), 1);
    assert_string_equal(buf, "4 hosts (rows: up to 2)");

    c = cluster("hosts=2,ranks-per-host=8");
    assert_int_equal(model_beyond(&s, &c, 1024, 1 << 30, buf, sizeof buf), 4);
    assert_non_null(strstr(buf, "8 ranks per host (rows: up to 2)"));
    assert_non_null(strstr(buf, "16 ranks (rows: up to 4)"));
    assert_non_null(strstr(buf, "sizes up to 1G (rows: up to 64M)"));
    assert_non_null(strstr(buf, "sizes from 1K (rows: from 64K)"));

    /* the link: the measured one is inside, another is not, an unnamed one is not known */
    c = cluster("hosts=2,link=1Gbit/s,latency=0us,measured-link=1gbit,measured-latency=0us");
    assert_int_equal(model_beyond(&s, &c, 65536, 65536, buf, sizeof buf), 0);
    c = cluster("hosts=2,link=5Gbit/s,latency=0us,measured-link=1gbit,measured-latency=0us");
    assert_int_equal(model_beyond(&s, &c, 65536, 65536, buf, sizeof buf), 1);
    assert_string_equal(buf, "link 5 Gbit/s (rows: 1 Gbit/s)");
    c = cluster("hosts=2,link=5Gbit/s,latency=0us");
    assert_int_equal(model_beyond(&s, &c, 65536, 65536, buf, sizeof buf), 1);
    assert_non_null(strstr(buf, "the rows' link not given"));

    /* one host's rows: any link is beyond them */
    for (size_t i = 0; i < s.npts; i++) pts[i].hosts = 1;
    c = cluster("hosts=2,link=5Gbit/s,latency=0us");
    assert_int_equal(model_beyond(&s, &c, 65536, 65536, buf, sizeof buf), 2);
    assert_non_null(strstr(buf, "rows: one host only"));

    /* a short buffer is cut and terminated */
    char small[12];
    memset(small, 'x', sizeof small);
    c = cluster("hosts=64,ranks-per-host=8");
    assert_true(model_beyond(&s, &c, 1, 1e12, small, sizeof small) > 0);
    assert_true(memchr(small, 0, sizeof small) != NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_span),
        cmocka_unit_test(test_beyond),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
