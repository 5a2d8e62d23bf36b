/* Plausibility checks of rows read by the report (report_check.h). */
#include "report/report_check.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* 0 when s has no control byte, else -1 with why naming the field. */
static int plain_text(const char *name, const char *s, char *why, size_t whylen)
{
    for (const unsigned char *p = (const unsigned char *)s; *p; p++)
        if (*p < 0x20 || *p == 0x7f) {
            snprintf(why, whylen, "%s holds a control byte (\\x%02x)", name, *p);
            return -1;
        }
    return 0;
}

/* nan_ok: NaN means "not recorded" for this field. neg_ok: a difference. */
static int plain_number(const char *name, double v, int nan_ok, int neg_ok, const char *what,
                        char *why, size_t whylen)
{
    if ((isnan(v) && nan_ok) || (isfinite(v) && (neg_ok || v >= 0))) return 0;
    snprintf(why, whylen, "%s is %g; %s must be finite%s", name, v, what,
             neg_ok ? "" : " and >= 0");
    return -1;
}

int report_check_comm(const bench_row *r, char *why, size_t whylen)
{
    const struct {
        const char *name;
        const char *s;
    } text[] = {
        {"timestamp", r->timestamp}, {"host", r->host},   {"collective", r->collective},
        {"backend", r->backend},     {"algo", r->algo},   {"device", r->device},
        {"buffers", r->buffers},     {"dtype", r->dtype}, {"op", r->op},
    };
    for (size_t i = 0; i < sizeof text / sizeof text[0]; i++)
        if (plain_text(text[i].name, text[i].s, why, whylen)) return -1;
    const struct {
        const char *name;
        double v;
        int nan_ok;
    } num[] = {
        {"time_us_avg", r->time_us_avg, 0}, {"time_us_min", r->time_us_min, 0},
        {"time_us_p25", r->time_us_p25, 1}, {"time_us_p50", r->time_us_p50, 1},
        {"time_us_p75", r->time_us_p75, 1}, {"time_us_p99", r->time_us_p99, 1},
        {"time_us_max", r->time_us_max, 0},
    };
    for (size_t i = 0; i < sizeof num / sizeof num[0]; i++)
        if (plain_number(num[i].name, num[i].v, num[i].nan_ok, 0, "times", why, whylen)) return -1;
    /* every time 0: a row that measured nothing (no clock is that fast), whose
     * bandwidths would be infinite or 0 and whose cell would win every ranking */
    if (r->time_us_avg == 0 && r->time_us_min == 0 && r->time_us_max == 0) {
        snprintf(why, whylen,
                 "every time is 0 (time_us_avg, time_us_min, time_us_max): nothing "
                 "was measured");
        return -1;
    }
    if (plain_number("algbw_GBps", r->algbw_GBps, 0, 0, "bandwidths", why, whylen) ||
        plain_number("busbw_GBps", r->busbw_GBps, 0, 0, "bandwidths", why, whylen))
        return -1;
    return 0;
}

int report_check_row(const rschema *s, const void *row, char *why, size_t whylen)
{
    for (size_t i = 0; i < s->nfields; i++) {
        const rfield *f = &s->fields[i];
        const char *p = (const char *)row + f->offset;
        if (f->kind == RF_STR && plain_text(f->name, p, why, whylen)) return -1;
        if (f->kind != RF_DBL) continue;
        /* comm_exposed_ms = step - compute and its share of the step: noise can make them < 0 */
        int neg_ok = !strcmp(f->name, "comm_exposed_ms") || !strcmp(f->name, "comm_overhead_pct");
        double v;
        memcpy(&v, p, sizeof v);
        if (plain_number(f->name, v, 0, neg_ok, "it", why, whylen)) return -1;
    }
    return 0;
}
