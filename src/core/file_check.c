/* Up-front checks of result file paths (file_check.h). access() asks the
 * kernel with the caller's ids, so permissions, read-only mounts and ACLs are
 * judged as the later write will be. */
#include "core/file_check.h"
#include "core/errbuf.h"
#include "coll.h"

#include <errno.h>
#include <limits.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The directory part of path ("." for a bare name); 0 if it does not fit. */
static int dir_of(const char *path, char *dir, size_t len)
{
    const char *slash = strrchr(path, '/');
    size_t n = !slash ? 1 : slash == path ? 1 : (size_t)(slash - path);
    if (n >= len) return 0;
    memcpy(dir, !slash ? "." : path, n);
    dir[n] = '\0';
    return 1;
}

/* May we create (and rename) files in the directory of path? */
static int check_dir(const char *path, char *err, size_t errlen)
{
    char dir[PATH_MAX];
    struct stat st;
    if (!dir_of(path, dir, sizeof dir)) {
        coll__set_err(err, errlen, "%s: path too long", path);
        return COLL_EINVAL;
    }
    if (stat(dir, &st) != 0) {
        coll__set_err(err, errlen, "%s: directory %s: %s", path, dir, strerror(errno));
        return COLL_ESYS;
    }
    if (!S_ISDIR(st.st_mode)) {
        coll__set_err(err, errlen, "%s: %s is not a directory", path, dir);
        return COLL_ESYS;
    }
    if (access(dir, W_OK | X_OK) != 0) {
        coll__set_err(err, errlen, "%s: cannot create files in %s: %s", path, dir, strerror(errno));
        return COLL_ESYS;
    }
    return COLL_OK;
}

int coll__file_check_writable(const char *path, coll__file_use use, char *err, size_t errlen)
{
    struct stat st;
    if (!path || !*path) {
        coll__set_err(err, errlen, "empty file name");
        return COLL_EINVAL;
    }
    /* A link could point anywhere (as root, at /etc/passwd): results are
     * written only to the file named. */
    if (lstat(path, &st) == 0 && S_ISLNK(st.st_mode)) {
        coll__set_err(err, errlen,
                      "%s: is a symbolic link; refusing to write through it (name the file "
                      "itself)",
                      path);
        return COLL_EINVAL;
    }
    if (stat(path, &st) != 0) {
        if (errno != ENOENT) {
            coll__set_err(err, errlen, "%s: %s", path, strerror(errno));
            return COLL_ESYS;
        }
        return check_dir(path, err, errlen);
    }
    if (S_ISDIR(st.st_mode)) {
        coll__set_err(err, errlen, "%s: is a directory, not a file", path);
        return COLL_ESYS;
    }
    /* A FIFO would block the header check's read before any rank starts, a
     * device takes rows without a header to check against. */
    if (!S_ISREG(st.st_mode)) {
        coll__set_err(err, errlen, "%s: not a regular file (%s); result files are regular files",
                      path,
                      S_ISFIFO(st.st_mode)                         ? "a FIFO"
                      : S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode) ? "a device"
                      : S_ISSOCK(st.st_mode)                       ? "a socket"
                                                                   : "not a file");
        return COLL_EINVAL;
    }
    if (access(path, W_OK) != 0) {
        coll__set_err(err, errlen, "%s: %s", path, strerror(errno));
        return COLL_ESYS;
    }
    return use == COLL_FILE_REPLACE ? check_dir(path, err, errlen) : COLL_OK;
}
