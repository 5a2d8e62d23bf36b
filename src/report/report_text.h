/* Text helpers of the report: a growable string buffer, human units (sizes in
 * KiB/MiB, times in us/ms/s), HTML escaping, base64 and whole-file IO. */
#ifndef REPORT_TEXT_H
#define REPORT_TEXT_H

#include <stddef.h>
#include <stdint.h>

typedef struct sbuf {
    char *p;
    size_t len, cap;
    int oom; /* an append failed: the text is incomplete */
} sbuf;

__attribute__((format(printf, 2, 3))) void report_sb_printf(sbuf *b, const char *fmt, ...);
void report_sb_put(sbuf *b, const char *s, size_t n);
void report_sb_puts(sbuf *b, const char *s);
void report_sb_free(sbuf *b);

/* "100 MiB", "1 KiB", "1.5 MiB", "8 B". */
const char *report_fmt_size(uint64_t bytes, char *buf, size_t len);
/* Axis style: "1K", "64K", "1M", "1G", "100M". */
const char *report_fmt_size_short(double bytes, char *buf, size_t len);
/* "12.3 us", "1.20 ms", "2.50 s" from microseconds. */
const char *report_fmt_time_us(double us, char *buf, size_t len);
/* "4.2" for factors < 10, "12" above. */
const char *report_fmt_factor(double f, char *buf, size_t len);

/* A training row's scaling efficiency, "0.91", or "N/A" where the run had no
 * 1-process baseline to compare with (collbench train then records 0). */
struct train_row;
const char *report_scaling_eff(const struct train_row *r, char *buf, size_t len);

void report_sb_html_escaped(sbuf *b, const char *s);
void report_sb_base64(sbuf *b, const unsigned char *data, size_t n);

/* A regular file of at most max bytes into a NUL-terminated malloc'd buffer.
 * Anything else is refused, never waited on or read without end: -1 with why
 * ("cannot read: No such file or directory", "is a FIFO or pipe, not a regular
 * file ...", "is 300000000 bytes, over the limit of 64 MiB"). */
int report_read_whole_file(const char *path, size_t max, char **text, size_t *len, char *why,
                           size_t whylen);
/* sbuf to path, atomically; 0 or a negative coll_status with err set. */
int report_write_sbuf(const char *path, const sbuf *b, char *err, size_t errlen);

#endif
