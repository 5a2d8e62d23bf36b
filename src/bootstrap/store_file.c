/* File store, like torch's FileStore: one file of appended records
 * (u32 key length, key, u32 value length, value; big-endian), the last record
 * of a key wins. Writers append under an exclusive flock, readers read under a
 * shared one, so nobody sees half a record. Each store keeps what it has parsed
 * and reads only what was appended since; get/wait poll with backoff. */
#include "bootstrap/store.h"
#include "bootstrap/store_kv.h"
#include "coll.h"
#include "core/be.h"
#include "core/clock.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAX_KEY (4u << 10)
#define MAX_VALUE (64u << 20)

typedef struct file_store {
    coll__store base;
    pthread_mutex_t lock; /* flock is per open file: threads of this store need more */
    int fd;
    char *path;
    off_t parsed; /* bytes of the file already in entries */
    coll__kv entries;
} file_store;

__attribute__((format(printf, 2, 3))) static int fail(file_store *f, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(f->base.err.msg, sizeof f->base.err.msg, fmt, ap);
    va_end(ap);
    return COLL_ESYS;
}

static coll__kv_entry *find(file_store *f, const char *key)
{
    return coll__kv_find(&f->entries, key);
}

static int read_exact(file_store *f, void *buf, size_t len, off_t off)
{
    char *p = buf;
    while (len > 0) {
        ssize_t n = pread(f->fd, p, len, off);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) return fail(f, "file store %s: read: %s", f->path, strerror(errno));
        if (n == 0) return fail(f, "file store %s: file shrank while locked", f->path);
        p += n;
        len -= (size_t)n;
        off += n;
    }
    return COLL_OK;
}

/* Parses records appended since the last call. Caller holds a flock on the file. */
static int refresh_locked(file_store *f)
{
    struct stat st;
    if (fstat(f->fd, &st) < 0) return fail(f, "file store %s: stat: %s", f->path, strerror(errno));
    if (st.st_size <= f->parsed) return COLL_OK;
    size_t len = (size_t)(st.st_size - f->parsed);
    unsigned char *buf = malloc(len);
    if (!buf) return COLL_ENOMEM;
    int rc = read_exact(f, buf, len, f->parsed);
    size_t pos = 0;
    while (!rc && len - pos >= 4) {
        uint32_t klen = coll__be_get_u32(buf + pos), vlen;
        /* A record that does not fit is a writer that died mid-append: stop there. */
        if (klen > MAX_KEY || len - pos - 4 < (size_t)klen + 4) break;
        vlen = coll__be_get_u32(buf + pos + 4 + klen);
        if (vlen > MAX_VALUE || len - pos - 8 - klen < vlen) break;
        rc = coll__kv_put_n(&f->entries, (char *)buf + pos + 4, klen, (char *)buf + pos + 8 + klen,
                            vlen);
        pos += 8 + (size_t)klen + vlen;
    }
    if (!rc) f->parsed += (off_t)pos;
    free(buf);
    return rc;
}

static int lock_file(file_store *f, int how)
{
    while (flock(f->fd, how) < 0)
        if (errno != EINTR) return fail(f, "file store %s: flock: %s", f->path, strerror(errno));
    return COLL_OK;
}

/* Re-reads the file under a shared lock. */
static int refresh(file_store *f)
{
    int rc = lock_file(f, LOCK_SH);
    if (rc) return rc;
    rc = refresh_locked(f);
    flock(f->fd, LOCK_UN);
    return rc;
}

/* Appends one record; caller holds the exclusive lock. */
static int append_locked(file_store *f, const char *key, const void *val, size_t vlen)
{
    size_t klen = strlen(key), len = 8 + klen + vlen;
    unsigned char *rec = malloc(len);
    if (!rec) return COLL_ENOMEM;
    coll__be_put_u32(rec, (uint32_t)klen);
    memcpy(rec + 4, key, klen);
    coll__be_put_u32(rec + 4 + klen, (uint32_t)vlen);
    memcpy(rec + 8 + klen, val, vlen);
    size_t done = 0;
    int rc = COLL_OK;
    while (done < len && !rc) {
        ssize_t n = write(f->fd, rec + done, len - done); /* O_APPEND */
        if (n > 0) done += (size_t)n;
        else if (n < 0 && errno != EINTR)
            rc = fail(f, "file store %s: write: %s", f->path, strerror(errno));
    }
    free(rec);
    return rc;
}

static int check_args(file_store *f, const char *key, size_t vlen)
{
    size_t klen = strlen(key);
    if (klen == 0 || klen > MAX_KEY || vlen > MAX_VALUE) {
        snprintf(f->base.err.msg, sizeof f->base.err.msg,
                 "file store %s: key of %zu bytes (1..%u) or value of %zu bytes (max %u)", f->path,
                 klen, MAX_KEY, vlen, MAX_VALUE);
        return COLL_EINVAL;
    }
    return COLL_OK;
}

static int file_set(coll__store *s, const char *key, const void *val, size_t len)
{
    file_store *f = (file_store *)s;
    int rc = check_args(f, key, len);
    if (rc) return rc;
    pthread_mutex_lock(&f->lock);
    if (!(rc = lock_file(f, LOCK_EX))) {
        rc = append_locked(f, key, val, len);
        flock(f->fd, LOCK_UN);
    }
    pthread_mutex_unlock(&f->lock);
    return rc;
}

static int file_add(coll__store *s, const char *key, int64_t delta, int64_t *result)
{
    file_store *f = (file_store *)s;
    int rc = check_args(f, key, 0);
    if (rc) return rc;
    int64_t v = 0;
    pthread_mutex_lock(&f->lock);
    if (!(rc = lock_file(f, LOCK_EX))) {
        if (!(rc = refresh_locked(f))) {
            char text[COLL__KV_COUNT_LEN];
            size_t n = coll__kv_next_count(&f->entries, key, delta, &v, text);
            rc = append_locked(f, key, text, n);
        }
        flock(f->fd, LOCK_UN);
    }
    pthread_mutex_unlock(&f->lock);
    if (!rc && result) *result = v;
    return rc;
}

/* Polls the file until every key is present; with val, returns keys[0]'s value.
 * The mutex is dropped while sleeping so other threads of this store can set. */
static int wait_keys(file_store *f, const char *const *keys, int nkeys, void **val, size_t *len)
{
    double deadline = coll__now_s() + f->base.timeout_s, pause = 0.001;
    for (;;) {
        int missing = -1;
        pthread_mutex_lock(&f->lock);
        int rc = refresh(f);
        for (int i = 0; i < nkeys && missing < 0 && !rc; i++)
            if (!find(f, keys[i])) missing = i;
        if (!rc && missing < 0 && val) rc = coll__kv_copy_out(find(f, keys[0]), val, len);
        pthread_mutex_unlock(&f->lock);
        if (rc || missing < 0) return rc;
        double left = deadline - coll__now_s();
        if (left <= 0) {
            snprintf(f->base.err.msg, sizeof f->base.err.msg,
                     "file store %s: timed out after %.3g s waiting for key '%s'%s", f->path,
                     f->base.timeout_s, keys[missing], nkeys > 1 ? " (and maybe others)" : "");
            return COLL_ETIMEDOUT;
        }
        coll__sleep_s(pause < left ? pause : left);
        pause = pause * 2 > 0.050 ? 0.050 : pause * 2;
    }
}

static int file_get(coll__store *s, const char *key, void **val, size_t *len)
{
    file_store *f = (file_store *)s;
    int rc = check_args(f, key, 0);
    return rc ? rc : wait_keys(f, &key, 1, val, len);
}

static int file_wait(coll__store *s, const char *const *keys, int nkeys)
{
    return wait_keys((file_store *)s, keys, nkeys, NULL, NULL);
}

static int file_check(coll__store *s, const char *key, int *exists)
{
    file_store *f = (file_store *)s;
    pthread_mutex_lock(&f->lock);
    int rc = refresh(f);
    *exists = !rc && find(f, key) != NULL;
    pthread_mutex_unlock(&f->lock);
    return rc;
}

static void file_destroy(coll__store *s)
{
    file_store *f = (file_store *)s;
    coll__kv_clear(&f->entries);
    if (f->fd >= 0) close(f->fd);
    pthread_mutex_destroy(&f->lock);
    free(f->path);
    free(f);
}

static const coll__store_ops file_ops = {
    .size = sizeof(coll__store_ops),
    .name = "file",
    .set = file_set,
    .get = file_get,
    .add = file_add,
    .wait = file_wait,
    .check = file_check,
    .destroy = file_destroy,
};

int coll__file_store_create(const char *path, double timeout_s, coll__store **out, coll__err *err)
{
    if (!path || !*path) {
        return coll__err_set(err, COLL_EINVAL, "file store: empty path");
    }
    file_store *f = calloc(1, sizeof *f);
    if (!f) return COLL_ENOMEM;
    f->base.ops = &file_ops;
    f->base.timeout_s = timeout_s;
    pthread_mutex_init(&f->lock, NULL);
    f->fd = open(path, O_RDWR | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
    if (f->fd < 0 || !(f->path = strdup(path))) {
        int rc = f->fd < 0 ? COLL_ESYS : COLL_ENOMEM;
        coll__err_set(err, 0, "file store %s: %s", path, strerror(f->fd < 0 ? errno : ENOMEM));
        file_destroy(&f->base);
        return rc;
    }
    *out = &f->base;
    return COLL_OK;
}
