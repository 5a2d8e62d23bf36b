/* The one error value of libcoll: what failed (status), whom to blame (a world
 * rank) and why (message), passed by pointer down every call that can fail.
 *
 * A sub-group (a hierarchical backend's intra-host, inter-host and all-hosts groups)
 * numbers its ranks 0..n-1; its rendezvous carries world_of, which maps them to
 * world ranks, and its backend makes its error values with that map
 * (coll__err_init), so code inside the group blames and names world ranks from
 * the start (coll__err_world, coll__err_blame), and a world rank outside the
 * group is just one coll__err_group does not find. Nobody rewrites a message.
 * Outside libcoll, errbuf.h's coll__set_err fills plain text buffers. */
#ifndef COLL_ERR_H
#define COLL_ERR_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#ifdef __cplusplus
}
#endif

#endif

#define COLL__ERR_MSG 512

typedef struct coll__err {
    int status;          /* COLL_OK, or the failure's status */
    int rank;            /* world rank to blame, -1: nobody */
    const int *world_of; /* group rank -> world rank; NULL: the group is the world */
    int nworld;          /* entries in world_of */
    char msg[COLL__ERR_MSG];
} coll__err;

/* No failure, nobody blamed, no message; keeps the map. NULL: nothing. */
void coll__err_clear(coll__err *e);
/* An error value for a group: cleared, with its map (NULL, 0: the world). */
void coll__err_init(coll__err *e, const int *world_of, int nworld);
/* World rank of rank r of e's group (r < 0 or outside the group: -1). */
int coll__err_world(const coll__err *e, int r);
/* Rank of e's group that world rank w is (w < 0 or not in the group: -1). */
int coll__err_group(const coll__err *e, int w);
/* dst gets src's status, blamed rank and message, keeping its own map (both
 * name world ranks). Returns src's status. */
int coll__err_pass(coll__err *dst, const coll__err *src);

/* Message from fmt, replacing any; status recorded when nonzero. Returns status.
 * e may be NULL (only the status then). */
__attribute__((format(printf, 3, 4))) int coll__err_set(coll__err *e, int status, const char *fmt,
                                                        ...);
/* The same, blaming rank r of e's group (the world rank it maps to). */
__attribute__((format(printf, 4, 5))) int coll__err_blame(coll__err *e, int status, int r,
                                                          const char *fmt, ...);
/* "fmt's text: old message" (the old message alone kept when empty so far,
 * fmt's text alone when there was none). */
__attribute__((format(printf, 2, 3))) void coll__err_prefix(coll__err *e, const char *fmt, ...);
/* Old message followed by fmt's text. */
__attribute__((format(printf, 2, 3))) void coll__err_append(coll__err *e, const char *fmt, ...);
/* The message, or the status's text when there is none. */
const char *coll__err_text(const coll__err *e);
/* coll__err_text(e) into a text buffer (NULL or len 0: nothing), cut to fit. */
void coll__err_copy(const coll__err *e, char *buf, size_t len);

#endif
