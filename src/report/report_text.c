/* String buffer, human units, escaping and file IO for the report writers. */
#include "report/report_text.h"

#include "rows/train_row.h"
#include "coll.h"
#include "core/atomic_file.h"
#include "core/errbuf.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int sb_reserve(sbuf *b, size_t extra)
{
    if (b->oom) return -1;
    if (b->len + extra + 1 <= b->cap) return 0;
    size_t cap = b->cap ? b->cap : 4096;
    while (cap < b->len + extra + 1) cap *= 2;
    char *p = realloc(b->p, cap);
    if (!p) {
        b->oom = 1;
        return -1;
    }
    b->p = p;
    b->cap = cap;
    return 0;
}

void report_sb_put(sbuf *b, const char *s, size_t n)
{
    if (sb_reserve(b, n) != 0) return;
    memcpy(b->p + b->len, s, n);
    b->len += n;
    b->p[b->len] = '\0';
}

void report_sb_puts(sbuf *b, const char *s) { report_sb_put(b, s, strlen(s)); }

void report_sb_printf(sbuf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0 || sb_reserve(b, (size_t)n) != 0) return;
    va_start(ap, fmt);
    vsnprintf(b->p + b->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    b->len += (size_t)n;
}

void report_sb_free(sbuf *b)
{
    free(b->p);
    memset(b, 0, sizeof *b);
}

static const char *const UNITS[] = {"B", "KiB", "MiB", "GiB", "TiB"};
static const char *const SHORT_UNITS[] = {"", "K", "M", "G", "T"};

const char *report_fmt_size(uint64_t bytes, char *buf, size_t len)
{
    int u = 0;
    double v = (double)bytes;
    while (u < 4 && v >= 1024.0) {
        v /= 1024.0;
        u++;
    }
    if (v == floor(v)) snprintf(buf, len, "%.0f %s", v, UNITS[u]);
    else snprintf(buf, len, "%.1f %s", v, UNITS[u]);
    return buf;
}

const char *report_fmt_size_short(double bytes, char *buf, size_t len)
{
    int u = 0;
    double v = bytes;
    while (u < 4 && v >= 1024.0 - 0.5) {
        v /= 1024.0;
        u++;
    }
    if (fabs(v - round(v)) < 1e-6) snprintf(buf, len, "%.0f%s", round(v), SHORT_UNITS[u]);
    else snprintf(buf, len, "%.3g%s", v, SHORT_UNITS[u]);
    return buf;
}

const char *report_fmt_time_us(double us, char *buf, size_t len)
{
    if (!isfinite(us)) snprintf(buf, len, "n/a");
    else if (us < 1000.0) snprintf(buf, len, "%.1f us", us);
    else if (us < 1e6) snprintf(buf, len, "%.2f ms", us / 1e3);
    else snprintf(buf, len, "%.2f s", us / 1e6);
    return buf;
}

const char *report_fmt_factor(double f, char *buf, size_t len)
{
    if (f < 10.0) snprintf(buf, len, "%.1f", f);
    else snprintf(buf, len, "%.0f", f);
    return buf;
}

const char *report_scaling_eff(const struct train_row *r, char *buf, size_t len)
{
    if (isfinite(r->scaling_eff) && r->scaling_eff > 0) snprintf(buf, len, "%.2f", r->scaling_eff);
    else snprintf(buf, len, "N/A");
    return buf;
}

void report_sb_html_escaped(sbuf *b, const char *s)
{
    for (; *s; s++) {
        switch (*s) {
        case '&': report_sb_puts(b, "&amp;"); break;
        case '<': report_sb_puts(b, "&lt;"); break;
        case '>': report_sb_puts(b, "&gt;"); break;
        case '"': report_sb_puts(b, "&quot;"); break;
        default: report_sb_put(b, s, 1);
        }
    }
}

void report_sb_base64(sbuf *b, const unsigned char *d, size_t n)
{
    static const char tab[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    if (sb_reserve(b, (n + 2) / 3 * 4) != 0) return;
    char *o = b->p + b->len;
    size_t i = 0;
    for (; i + 2 < n; i += 3) {
        unsigned v = (unsigned)d[i] << 16 | (unsigned)d[i + 1] << 8 | d[i + 2];
        *o++ = tab[v >> 18], *o++ = tab[(v >> 12) & 63], *o++ = tab[(v >> 6) & 63],
        *o++ = tab[v & 63];
    }
    if (i < n) {
        unsigned v = (unsigned)d[i] << 16 | (i + 1 < n ? (unsigned)d[i + 1] << 8 : 0);
        *o++ = tab[v >> 18], *o++ = tab[(v >> 12) & 63];
        *o++ = i + 1 < n ? tab[(v >> 6) & 63] : '=';
        *o++ = '=';
    }
    b->len = (size_t)(o - b->p);
    b->p[b->len] = '\0';
}

/* What a path that is not a regular file is, for the message. */
static const char *file_kind(mode_t m)
{
    return S_ISDIR(m)    ? "a directory"
           : S_ISFIFO(m) ? "a FIFO or pipe"
           : S_ISCHR(m)  ? "a character device"
           : S_ISBLK(m)  ? "a block device"
           : S_ISSOCK(m) ? "a socket"
                         : "not a regular file";
}

int report_read_whole_file(const char *path, size_t max, char **text, size_t *len, char *why,
                           size_t whylen)
{
    *text = NULL;
    *len = 0;
    /* O_NONBLOCK: opening a FIFO must not wait for a writer; it is refused below. */
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) {
        coll__set_err(why, whylen, "cannot read: %s", strerror(errno));
        return -1;
    }
    struct stat st;
    if (fstat(fd, &st) != 0) {
        coll__set_err(why, whylen, "cannot read: %s", strerror(errno));
        close(fd);
        return -1;
    }
    if (!S_ISREG(st.st_mode)) {
        coll__set_err(why, whylen, "is %s, not a regular file%s", file_kind(st.st_mode),
                      S_ISDIR(st.st_mode) ? "" : " (save its output to a file first)");
        close(fd);
        return -1;
    }
    char limit[32];
    if ((uint64_t)st.st_size > max) {
        coll__set_err(why, whylen, "is %lld bytes, over the limit of %s", (long long)st.st_size,
                      report_fmt_size(max, limit, sizeof limit));
        close(fd);
        return -1;
    }
    /* Up to max + 1 bytes: a file that grows while it is read is caught too. */
    size_t cap = (size_t)st.st_size + 2, n = 0;
    char *buf = malloc(cap);
    int e = buf ? 0 : ENOMEM;
    while (!e && n <= max) {
        if (n + 1 >= cap) {
            size_t c = cap * 2 > max + 2 ? max + 2 : cap * 2;
            char *p = realloc(buf, c);
            if (!p) {
                e = ENOMEM;
                break;
            }
            buf = p;
            cap = c;
        }
        ssize_t got = read(fd, buf + n, cap - n - 1);
        if (got < 0 && errno == EINTR) continue;
        if (got < 0) e = errno;
        if (got <= 0) break;
        n += (size_t)got;
    }
    close(fd);
    if (e || n > max) {
        if (e) coll__set_err(why, whylen, "cannot read: %s", strerror(e));
        else
            coll__set_err(why, whylen, "grew past the limit of %s while read",
                          report_fmt_size(max, limit, sizeof limit));
        free(buf);
        return -1;
    }
    buf[n] = '\0';
    *text = buf;
    *len = n;
    return 0;
}

int report_write_sbuf(const char *path, const sbuf *b, char *err, size_t errlen)
{
    if (b->oom) {
        coll__set_err(err, errlen, "%s: out of memory building the file", path);
        return COLL_ENOMEM;
    }
    return coll__file_write_atomic(path, b->p ? b->p : "", b->len, err, errlen);
}
