/* A trace directory's files: DIR/rank<R>.jsonl, one per rank. */
#ifndef REPLAY_TRACE_FILES_H
#define REPLAY_TRACE_FILES_H

#include <stddef.h>

/* 1 when name is "rank<digits>.jsonl". */
int replay_is_rank_file(const char *name);

/* dir's rank files as "dir/rankR.jsonl", sorted by rank, in *paths (*n of
 * them, 0 when none; free with replay_rank_files_free). 0, or -1 with
 * "DIR: why" in err. */
int replay_rank_files(const char *dir, char ***paths, size_t *n, char *err, size_t errlen);
void replay_rank_files_free(char **paths, size_t n);

#endif
