/* collbench replay --calls: see replay_calls.h. */
#include "replay/replay_calls.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "replay/replay_output.h"
#include "replay/replay_run.h"

int replay_calls_format(const replay_trace *t, const char *backend, int pass, double rec_from_s,
                        const double *issue_s, const double *call_s, char **out, size_t *len)
{
    *out = NULL;
    *len = 0;
    FILE *f = open_memstream(out, len);
    if (!f) return -1;
    for (size_t i = 0; i < t->ncalls; i++) {
        const replay_call *c = &t->calls[i];
        replay_csv_text(f, backend);
        fprintf(f, ",%d,%d,%zu,%lld,", pass, t->rank, i, (long long)c->seq);
        replay_csv_text(f, t->groups[c->group].id);
        fprintf(f, ",%s,%s,%llu,", replay_op_name(c->op), coll_dtype_name(c->dtype),
                (unsigned long long)replay_call_bytes(t, c));
        if (t->has_times)
            fprintf(f, "%.9f,%.9f,", rec_from_s + (double)(c->t0 - t->calls[0].t0) * 1e-9,
                    (double)(c->t1 - c->t0) * 1e-9);
        else fputs(",,", f);
        fprintf(f, "%.9f,%.9f\n", issue_s[i], call_s[i]);
    }
    return fclose(f) == 0 ? 0 : -1;
}

/* Rows travel in pieces of at most this many bytes, so that rank 0, out of
 * memory, still takes every piece in (into its stack) and no sender waits. */
#define PIECE ((size_t)64 << 10)

int replay_calls_gather(coll_comm *world, const char *mine, size_t len, char **all, size_t *alllen)
{
    int rank = coll_comm_rank(world), n = coll_comm_size(world), rc = COLL_OK;
    *all = NULL;
    *alllen = 0;
    if (rank != 0) {
        int64_t l = (int64_t)len;
        rc = coll_send(world, &l, 1, COLL_INT64, 0);
        for (size_t at = 0; rc == COLL_OK && at < len; at += PIECE)
            rc = coll_send(world, mine + at, len - at < PIECE ? len - at : PIECE, COLL_UINT8, 0);
        return rc;
    }
    char drain[PIECE];
    size_t at = len;
    char *buf = malloc(len + 1);
    if (buf) memcpy(buf, mine, len);
    for (int r = 1; r < n && rc == COLL_OK; r++) {
        int64_t l = 0;
        rc = coll_recv(world, &l, 1, COLL_INT64, r);
        char *grown = rc || !buf || l < 0 ? NULL : realloc(buf, at + (size_t)l + 1);
        if (!grown) free(buf);
        buf = grown;
        for (int64_t got = 0; rc == COLL_OK && got < l; got += (int64_t)PIECE) {
            size_t m = (size_t)(l - got) < PIECE ? (size_t)(l - got) : PIECE;
            rc = coll_recv(world, buf ? buf + at + got : drain, m, COLL_UINT8, r);
        }
        at += buf ? (size_t)l : 0;
    }
    if (rc || !buf) {
        free(buf);
        return rc ? rc : COLL_ENOMEM;
    }
    *all = buf;
    *alllen = at;
    return COLL_OK;
}
