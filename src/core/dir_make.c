/* mkdir -p: see dir_make.h. */
#include "core/dir_make.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

int coll__dir_make(const char *dir, char *err, size_t errlen)
{
    char path[4096];
    if (snprintf(path, sizeof path, "%s", dir) >= (int)sizeof path) {
        snprintf(err, errlen, "%s: path too long", dir);
        errno = ENAMETOOLONG;
        return -1;
    }
    for (char *p = path + 1;; p++) {
        if (*p != '/' && *p != '\0') continue;
        char c = *p;
        *p = '\0';
        if (mkdir(path, 0777) != 0 && errno != EEXIST) {
            int e = errno;
            snprintf(err, errlen, "cannot create %s: %s", path, strerror(e));
            errno = e;
            return -1;
        }
        *p = c;
        if (!c) break;
    }
    return 0;
}
