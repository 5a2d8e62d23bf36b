/* Bounded, escaped messages about the report's input files. */
#include "report/report_log.h"

#include <stdarg.h>
#include <string.h>

/* report_log_escape; non_ascii: bytes over 0x7f as \xNN too. */
static const char *escape(const char *s, size_t n, int non_ascii, char *out, size_t outlen)
{
    size_t k = 0;
    if (outlen == 0) return out;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        int ctl = c < 0x20 || c == 0x7f || (non_ascii && c > 0x7f);
        size_t need = ctl ? 4 : 1;
        if (k + need + 4 > outlen) { /* room for "..." and the NUL */
            memcpy(out + k, "...", 3);
            k += 3;
            break;
        }
        if (ctl) k += (size_t)snprintf(out + k, outlen - k, "\\x%02x", c);
        else out[k++] = (char)c;
    }
    out[k] = '\0';
    return out;
}

const char *report_log_escape(const char *s, size_t n, char *out, size_t outlen)
{
    return escape(s, n, 0, out, outlen);
}

const char *report_log_escape_ascii(const char *s, size_t n, char *out, size_t outlen)
{
    return escape(s, n, 1, out, outlen);
}

void report_log_problem(report_log *l, const char *fmt, ...)
{
    if (l->problems++ >= REPORT_LOG_SHOWN) return;
    char msg[1024], shown[sizeof msg * 2];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (n < 0) return;
    size_t len = (size_t)n < sizeof msg ? (size_t)n : sizeof msg - 1;
    fprintf(l->f, "collbench report: %s\n", report_log_escape(msg, len, shown, sizeof shown));
}

void report_log_done(const report_log *l)
{
    if (l->problems <= REPORT_LOG_SHOWN) return;
    char path[512];
    fprintf(l->f,
            "collbench report: ... and %zu more bad lines in %s (only the first %d are shown)\n",
            l->problems - REPORT_LOG_SHOWN,
            report_log_escape(l->path, strlen(l->path), path, sizeof path), REPORT_LOG_SHOWN);
}
