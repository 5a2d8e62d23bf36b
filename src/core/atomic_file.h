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

/* Several runs may write one result file at once (two `-J same.json`): each
 * takes this exclusive lock around its read-modify-write (read the JSON, merge,
 * replace; look at the CSV header, append), so no run's rows are lost. It is a
 * flock on ".NAME.lock" beside path (created once and kept: removing it would
 * race another writer's open), or on path itself where that cannot be created.
 * *lock_fd is -1 when there is nothing to lock (path is not a regular file).
 * Returns 0 or COLL_ESYS with err set. */
int coll__file_lock(const char *path, int *lock_fd, char *err, size_t errlen);
void coll__file_unlock(int lock_fd);

/* A result file of one CSV schema: under the file's lock, refuses a file whose
 * first line is not header (COLL_EINVAL, "PATH has a different header (...);
 * refusing to mix schemas"), else appends rows, header first when the file
 * is new or empty. header has no newline; rows end with one. 0 or a status. */
int coll__csv_append(const char *path, const char *header, const char *rows, size_t len, char *err,
                     size_t errlen);
/* The same refusal before a run, nothing written: 0 when path is absent,
 * empty or starts with header. */
int coll__csv_check_header(const char *path, const char *header, char *err, size_t errlen);

#endif
