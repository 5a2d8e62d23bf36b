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
    int fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
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
