#include "core/err.h"
#include "coll.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

void coll__err_clear(coll__err *e)
{
    if (!e) return;
    e->status = 0;
    e->rank = -1;
    e->msg[0] = '\0';
}

void coll__err_init(coll__err *e, const int *world_of, int nworld)
{
    if (!e) return;
    e->world_of = world_of;
    e->nworld = world_of ? nworld : 0;
    coll__err_clear(e);
}

int coll__err_world(const coll__err *e, int r)
{
    if (r < 0) return -1;
    if (!e || !e->world_of) return r;
    return r < e->nworld ? e->world_of[r] : -1;
}

int coll__err_group(const coll__err *e, int w)
{
    if (w < 0) return -1;
    if (!e || !e->world_of) return w;
    for (int r = 0; r < e->nworld; r++)
        if (e->world_of[r] == w) return r;
    return -1;
}

int coll__err_pass(coll__err *dst, const coll__err *src)
{
    if (!dst || !src || dst == src) return src ? src->status : 0;
    dst->status = src->status;
    dst->rank = src->rank;
    memcpy(dst->msg, src->msg, sizeof dst->msg);
    return src->status;
}

static void vset(coll__err *e, const char *fmt, va_list ap)
{
    char tmp[COLL__ERR_MSG];
    vsnprintf(tmp, sizeof tmp, fmt, ap); /* fmt's arguments may quote e->msg */
    memcpy(e->msg, tmp, sizeof tmp);
}

static int vrecord(coll__err *e, int status, const char *fmt, va_list ap)
{
    if (!e) return status;
    vset(e, fmt, ap);
    if (status) e->status = status;
    return status;
}

int coll__err_set(coll__err *e, int status, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vrecord(e, status, fmt, ap);
    va_end(ap);
    return status;
}

int coll__err_blame(coll__err *e, int status, int r, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vrecord(e, status, fmt, ap);
    va_end(ap);
    if (e) e->rank = coll__err_world(e, r);
    return status;
}

void coll__err_prefix(coll__err *e, const char *fmt, ...)
{
    if (!e) return;
    char head[COLL__ERR_MSG], tmp[COLL__ERR_MSG];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(head, sizeof head, fmt, ap);
    va_end(ap);
    if (n <= 0) return;
    size_t h = strlen(head);
    memcpy(tmp, head, h + 1);
    if (e->msg[0] && h + 2 < sizeof tmp) {
        memcpy(tmp + h, ": ", 3);
        size_t rest = sizeof tmp - h - 3, m = strlen(e->msg);
        if (m > rest) m = rest;
        memcpy(tmp + h + 2, e->msg, m);
        tmp[h + 2 + m] = '\0';
    }
    memcpy(e->msg, tmp, sizeof tmp);
}

void coll__err_append(coll__err *e, const char *fmt, ...)
{
    if (!e) return;
    size_t n = strlen(e->msg);
    if (n + 1 >= sizeof e->msg) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(e->msg + n, sizeof e->msg - n, fmt, ap);
    va_end(ap);
}

const char *coll__err_text(const coll__err *e)
{
    if (!e) return "";
    return e->msg[0] ? e->msg : coll_strerror(e->status);
}

void coll__err_copy(const coll__err *e, char *buf, size_t len)
{
    if (!buf || !len) return;
    const char *t = coll__err_text(e);
    size_t n = strlen(t);
    if (n >= len) n = len - 1;
    memcpy(buf, t, n);
    buf[n] = '\0';
}
