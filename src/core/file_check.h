/* Can a result file be written? Asked before minutes of benchmarking, so a
 * bad path costs nothing; nothing is created, so a run that fails later leaves
 * no empty or header-only file behind. */
#ifndef COLL_FILE_CHECK_H
#define COLL_FILE_CHECK_H

#include <stddef.h>

/* How the file will be written (core/atomic_file.h). */
typedef enum coll__file_use {
    COLL_FILE_APPEND,  /* coll__file_append: a regular file */
    COLL_FILE_REPLACE, /* coll__file_write_atomic: a regular file, temporary + rename */
} coll__file_use;

/* 0 when path can be written as use says: it is a regular file we may write
 * (and, for REPLACE, create the temporary beside it), or it does not exist and
 * its directory exists and we may create files there. Else COLL_ESYS with
 * "path: the problem" in err (a directory, a missing directory, no
 * permission), or COLL_EINVAL for a symbolic link, a FIFO, a device or a
 * socket (refused: a link may point anywhere, a FIFO blocks a reader). */
int coll__file_check_writable(const char *path, coll__file_use use, char *err, size_t errlen);

#endif
