/* Crash- and full-disk-safe file writes for result files (CSV, JSON).
 * Result files hold hours of measurements: a failed write must never cost
 * the rows that were already there. */
#include "core/errbuf.h"
#include "core/atomic_file.h"
#include "coll.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>


/* Writes all of buf, retrying short writes and EINTR. Returns bytes written;
 * on failure fewer, with errno set (ENOSPC for a full disk). */
static size_t write_all(int fd, const char *buf, size_t len)
{
    size_t done = 0;
    while (done < len) {
        ssize_t w = write(fd, buf + done, len - done);
        if (w < 0) {
            if (errno == EINTR) continue;
            return done;
        }
        if (w == 0) { /* no progress and no errno: treat as an I/O error */
            errno = EIO;
            return done;
        }
        done += (size_t)w;
    }
    return done;
}

/* fsync the directory holding path, so the rename itself survives a crash.
 * Filesystems that cannot fsync a directory (EINVAL) are not an error. */
static int fsync_parent_dir(const char *path, char *err, size_t errlen)
{
    char dir[PATH_MAX];
    const char *slash = strrchr(path, '/');
    if (!slash) {
        strcpy(dir, ".");
    } else if (slash == path) {
        strcpy(dir, "/");
    } else {
        size_t n = (size_t)(slash - path);
        if (n >= sizeof dir) {
            coll__set_err(err, errlen, "%s: path too long", path);
            return COLL_EINVAL;
        }
        memcpy(dir, path, n);
        dir[n] = '\0';
    }
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) {
        coll__set_err(err, errlen, "%s: cannot open directory %s: %s", path, dir, strerror(errno));
        return COLL_ESYS;
    }
    int rc = fsync(fd);
    int e = errno;
    close(fd);
    if (rc != 0 && e != EINVAL && e != EROFS) {
        coll__set_err(err, errlen, "%s: fsync of directory %s: %s", path, dir, strerror(e));
        return COLL_ESYS;
    }
    return COLL_OK;
}

/* Creates the temporary exclusively; a leftover from a crashed run with our
 * pid is stale, so it is removed once and creation retried. */
static int open_temp(const char *tmp, mode_t mode)
{
    for (int attempt = 0; attempt < 2; attempt++) {
        int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode);
        if (fd >= 0 || errno != EEXIST || attempt > 0) return fd;
        if (unlink(tmp) != 0) return -1;
    }
    return -1;
}

int coll__file_write_atomic(const char *path, const void *data, size_t len, char *err,
                            size_t errlen)
{
    if (!path || !*path || (!data && len > 0)) {
        coll__set_err(err, errlen, "coll__file_write_atomic: %s",
                      path && *path ? "no data" : "empty path");
        return COLL_EINVAL;
    }
    char tmp[PATH_MAX];
    if ((size_t)snprintf(tmp, sizeof tmp, "%s.tmp.%ld", path, (long)getpid()) >= sizeof tmp) {
        coll__set_err(err, errlen, "%s: path too long", path);
        return COLL_EINVAL;
    }

    /* Keep the permissions of the file being replaced. */
    mode_t mode = 0644;
    struct stat st;
    int exists = stat(path, &st) == 0;
    if (exists && S_ISDIR(st.st_mode)) {
        coll__set_err(err, errlen, "%s: %s", path, strerror(EISDIR));
        return COLL_ESYS;
    }
    if (exists) mode = st.st_mode & 07777;

    int fd = open_temp(tmp, mode);
    if (fd < 0) {
        coll__set_err(err, errlen, "%s: cannot create temporary %s: %s", path, tmp,
                      strerror(errno));
        return COLL_ESYS;
    }
    if (exists && fchmod(fd, mode) != 0) {
        /* umask may have narrowed the mode; restoring it is best effort */
    }

    const char *step = NULL;
    int e = 0;
    if (write_all(fd, data, len) != len) {
        step = "write";
        e = errno;
    } else if (fsync(fd) != 0) {
        step = "fsync";
        e = errno;
    }
    if (close(fd) != 0 && !step) { /* NFS reports some write errors only here */
        step = "close";
        e = errno;
    }
    if (!step && rename(tmp, path) != 0) {
        step = "rename";
        e = errno;
    }
    if (step) {
        unlink(tmp);
        coll__set_err(err, errlen, "%s: %s (%s of temporary %s; file left unchanged)", path,
                      strerror(e), step, tmp);
        return COLL_ESYS;
    }
    return fsync_parent_dir(path, err, errlen);
}

int coll__file_append(const char *path, const void *data, size_t len, char *err, size_t errlen)
{
    if (!path || !*path || (!data && len > 0)) {
        coll__set_err(err, errlen, "coll__file_append: %s",
                      path && *path ? "no data" : "empty path");
        return COLL_EINVAL;
    }
    /* created: this call made the file, and removes it again when nothing whole
     * could be written (no empty result file left behind by a full disk) */
    int created = 1;
    int fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd < 0 && errno == EEXIST) {
        created = 0;
        fd = open(path, O_WRONLY | O_APPEND | O_CLOEXEC);
    }
    if (fd < 0) {
        coll__set_err(err, errlen, "%s: %s", path, strerror(errno));
        return COLL_ESYS;
    }
    struct stat st;
    int have_size = fstat(fd, &st) == 0 && S_ISREG(st.st_mode);
    off_t before = have_size ? st.st_size : 0;

    size_t done = write_all(fd, data, len);
    if (done != len) {
        int e = errno;
        /* Take back our partial bytes only if the file is exactly as we left it:
         * another appender's rows must never be cut. */
        int kept = done == 0;
        if (have_size && done > 0 && fstat(fd, &st) == 0 && st.st_size == before + (off_t)done)
            kept = ftruncate(fd, before) == 0;
        close(fd);
        if (created && kept && have_size && before == 0) unlink(path);
        /* "results.csv: No space left on device; earlier rows kept" */
        coll__set_err(err, errlen, "%s: %s; %s", path, strerror(e),
                      kept ? "earlier rows kept"
                           : "earlier rows kept, but a partial row may follow them");
        return COLL_ESYS;
    }
    /* Character devices (/dev/null, a terminal) cannot be fsynced: not an error. */
    if (fsync(fd) != 0 && errno != EINVAL && errno != EROFS) {
        int e = errno;
        close(fd);
        coll__set_err(err, errlen, "%s: %s (fsync); earlier rows kept, the new ones may be lost",
                      path, strerror(e));
        return COLL_ESYS;
    }
    if (close(fd) != 0) {
        coll__set_err(err, errlen, "%s: %s (close)", path, strerror(errno));
        return COLL_ESYS;
    }
    return COLL_OK;
}

int coll__file_lock(const char *path, int *lock_fd, char *err, size_t errlen)
{
    *lock_fd = -1;
    struct stat st;
    if (stat(path, &st) == 0 && !S_ISREG(st.st_mode)) return COLL_OK;
    const char *slash = strrchr(path, '/');
    const char *name = slash ? slash + 1 : path;
    int dirlen = slash ? (int)(slash - path + 1) : 0;
    char lock[PATH_MAX];
    if ((size_t)snprintf(lock, sizeof lock, "%.*s.%s.lock", dirlen, path, name) >= sizeof lock) {
        coll__set_err(err, errlen, "%s: path too long", path);
        return COLL_EINVAL;
    }
    int fd = open(lock, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
    if (fd < 0) fd = open(path, O_RDONLY | O_CLOEXEC); /* a directory we cannot write */
    if (fd < 0) return COLL_OK; /* no file and no directory to write: the write says why */
    while (flock(fd, LOCK_EX) != 0) {
        if (errno == EINTR) continue;
        coll__set_err(err, errlen, "%s: cannot lock %s: %s", path, lock, strerror(errno));
        close(fd);
        return COLL_ESYS;
    }
    *lock_fd = fd;
    return COLL_OK;
}

void coll__file_unlock(int lock_fd)
{
    if (lock_fd >= 0) close(lock_fd); /* closing the last descriptor drops the flock */
}

/* 1: path is absent or empty; 0: its first line is header; -1: another first
 * line, put (cut, printable) into seen; COLL_ESYS when it cannot be read. */
static int header_state(const char *path, const char *header, char *seen, size_t seenlen, char *err,
                        size_t errlen)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) {
        if (errno == ENOENT) return 1;
        coll__set_err(err, errlen, "%s: %s", path, strerror(errno));
        return COLL_ESYS;
    }
    char head[512];
    ssize_t n = pread(fd, head, sizeof head - 1, 0);
    close(fd);
    if (n < 0) {
        coll__set_err(err, errlen, "%s: %s", path, strerror(errno));
        return COLL_ESYS;
    }
    if (n == 0) return 1;
    head[n] = '\0';
    size_t line = strcspn(head, "\r\n");
    if (line == strlen(header) && memcmp(head, header, line) == 0) return 0;
    size_t k = 0;
    for (size_t i = 0; i < line && k + 4 < seenlen && i < 60; i++)
        seen[k++] = head[i] >= 0x20 && head[i] < 0x7f ? head[i] : '?';
    if (line > 60 && k + 4 < seenlen) seen[k++] = '.', seen[k++] = '.', seen[k++] = '.';
    seen[k] = '\0';
    return -1;
}

int coll__csv_check_header(const char *path, const char *header, char *err, size_t errlen)
{
    char seen[80];
    int st = header_state(path, header, seen, sizeof seen, err, errlen);
    if (st == -1) {
        coll__set_err(err, errlen, "%s has a different header (\"%s\"); refusing to mix schemas",
                      path, seen);
        return COLL_EINVAL;
    }
    return st < 0 ? st : COLL_OK;
}

int coll__csv_append(const char *path, const char *header, const char *rows, size_t len, char *err,
                     size_t errlen)
{
    int lock, rc = coll__file_lock(path, &lock, err, errlen);
    char seen[80];
    int st = rc ? rc : header_state(path, header, seen, sizeof seen, err, errlen);
    if (st == -1) {
        coll__set_err(err, errlen, "%s has a different header (\"%s\"); refusing to mix schemas",
                      path, seen);
        rc = COLL_EINVAL;
    } else if (st < 0) {
        rc = st;
    } else if (st == 1) { /* new: header and rows in one write */
        size_t hlen = strlen(header);
        char *buf = malloc(hlen + 1 + len);
        if (!buf) {
            coll__set_err(err, errlen, "%s: out of memory", path);
            rc = COLL_ENOMEM;
        } else {
            memcpy(buf, header, hlen);
            buf[hlen] = '\n';
            if (len) memcpy(buf + hlen + 1, rows, len);
            rc = coll__file_append(path, buf, hlen + 1 + len, err, errlen);
            free(buf);
        }
    } else {
        rc = coll__file_append(path, rows, len, err, errlen);
    }
    coll__file_unlock(lock);
    return rc;
}
