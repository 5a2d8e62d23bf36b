/* Job token: a random secret shared by the ranks of one job (COLL_JOB_TOKEN),
 * so that a stray process connecting to the store or a transport port cannot
 * join. 32 random bytes from getrandom(), written as 64 lowercase hex chars. */
#ifndef COLL_TOKEN_H
#define COLL_TOKEN_H

#define COLL_TOKEN_BYTES 32
#define COLL_TOKEN_HEX_LEN (2 * COLL_TOKEN_BYTES)

/* Fills hex (COLL_TOKEN_HEX_LEN + 1 bytes, NUL-terminated) with a fresh token.
 * Returns 0, or COLL_ESYS when the kernel gives no random bytes. */
int coll_token_generate(char hex[COLL_TOKEN_HEX_LEN + 1]);

/* 1 if s is a well-formed token: exactly 64 lowercase hex digits. */
int coll_token_is_valid(const char *s);

#endif
