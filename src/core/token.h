/* Job token: a random secret shared by the ranks of one job (COLL_JOB_TOKEN),
 * so that a stray process connecting to the store or a transport port cannot
 * join. 32 random bytes from getrandom(), written as 64 lowercase hex chars. */
#ifndef COLL_TOKEN_H
#define COLL_TOKEN_H

#define COLL_TOKEN_BYTES 32
#define COLL_TOKEN_HEX_LEN (2 * COLL_TOKEN_BYTES)

/* Fills hex (COLL_TOKEN_HEX_LEN + 1 bytes, NUL-terminated) with a fresh token.
 * Returns 0, or COLL_ESYS when the kernel gives no random bytes. */
int coll__token_generate(char hex[COLL_TOKEN_HEX_LEN + 1]);

/* 1 if s is a well-formed token: exactly 64 lowercase hex digits. */
int coll__token_is_valid(const char *s);

#include <stddef.h>

#define COLL_ENV_JOB_TOKEN_VAR "COLL_JOB_TOKEN"
#define COLL_ENV_JOB_TOKEN_FILE "COLL_JOB_TOKEN_FILE"

/* The first line of path (at most 64 printable characters, no spaces) into out.
 * The file must be a regular file no one but its owner can read. COLL_OK, or
 * COLL_EINVAL with err naming the file and the problem. */
int coll__token_read_file(const char *path, char out[COLL_TOKEN_HEX_LEN + 1], char *err,
                          size_t errlen);

/* The job's token: $COLL_JOB_TOKEN (what launchers hand their ranks), else the
 * file $COLL_JOB_TOKEN_FILE names; out "" when neither is set. */
int coll__token_from_env(char out[COLL_TOKEN_HEX_LEN + 1], char *err, size_t errlen);
/* given (coll_config.job_token) when it is set, else coll__token_from_env's. */
int coll__token_from_config(const char *given, char out[COLL_TOKEN_HEX_LEN + 1], char *err,
                            size_t errlen);

#endif
