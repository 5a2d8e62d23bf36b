/* Rows that parse but cannot be true: a time or bandwidth that is NaN,
 * infinite or negative, or text with control bytes. The report would plot
 * and compare them as if measured, so the readers skip them with a warning. */
#ifndef REPORT_CHECK_H
#define REPORT_CHECK_H

#include <stddef.h>

#include "report/report_data.h"
#include "report/report_fields.h"

/* 0, or -1 with why ("time_us_avg is nan; times must be finite and >= 0").
 * NaN is allowed in time_us_p25..p99 only: "not recorded" (files from before
 * those columns, JSON null). */
int report_check_comm(const bench_row *r, char *why, size_t whylen);

/* The same for a training or memory row of schema s: its times and
 * throughput finite and >= 0 (the exposed communication, a difference, may be
 * negative), every number finite, no control bytes in its text. */
int report_check_row(const rschema *s, const void *row, char *why, size_t whylen);

#endif
