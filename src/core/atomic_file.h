/* Files that are never left half-written: whole-file replacement through a
 * temporary + rename, and appends that are fsynced and rolled back on failure.
 * Errors come back as a negative coll_status with "path: strerror" in err. */
#ifndef COLL_ATOMIC_FILE_H
#define COLL_ATOMIC_FILE_H

#include <stddef.h>

/* Replace path with data: writes path.tmp.<pid>, fsyncs it, renames it over
 * path and fsyncs the directory, so readers see the old or the new file, never
 * a mix. An existing file keeps its permission bits. On failure the temporary
 * is removed and path is untouched. Returns 0 or COLL_ESYS / COLL_EINVAL. */
int coll__file_write_atomic(const char *path, const void *data, size_t len, char *err,
                            size_t errlen);

/* Append data to path (created 0644 minus umask if missing) with O_APPEND in one
 * write loop, then fsync. If the write fails part-way (ENOSPC...), the bytes this
 * call added are truncated away again when no other writer appended meanwhile, so
 * existing data is never damaged and no half line is left. Returns 0 or COLL_ESYS. */
int coll__file_append(const char *path, const void *data, size_t len, char *err, size_t errlen);

#endif
