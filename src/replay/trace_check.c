/* Every rank's trace against the others before anything runs: a replay of
 * traces that disagree would hang or fail mid-way, so the first disagreement is
 * named here instead (files, seq, line, group, what differs). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "replay/trace.h"

typedef struct checker {
    replay_trace **by_rank; /* world entries */
    int world;
    char *err;
    size_t errlen;
} checker;

static void ranks_text(const replay_group *g, char *buf, size_t len)
{
    size_t k = 0;
    buf[0] = '\0';
    for (int i = 0; i < g->nranks && k + 16 < len; i++)
        k += (size_t)snprintf(buf + k, len - k, "%s%d", i ? "," : "", g->ranks[i]);
    if (k + 16 >= len) snprintf(buf + k, len - k, ",...");
}

static int check_world(checker *c, replay_trace *const *traces, size_t n)
{
    c->world = traces[0]->world;
    for (size_t i = 1; i < n; i++)
        if (traces[i]->world != c->world)
            return snprintf(c->err, c->errlen, "%s says world %d, %s says world %d",
                            traces[i]->path, traces[i]->world, traces[0]->path, c->world),
                   -1;
    c->by_rank = calloc((size_t)c->world, sizeof *c->by_rank);
    if (!c->by_rank) return snprintf(c->err, c->errlen, "out of memory"), -1;
    for (size_t i = 0; i < n; i++) {
        replay_trace *t = traces[i], **slot = &c->by_rank[t->rank];
        if (*slot)
            return snprintf(c->err, c->errlen, "rank %d has two traces: %s and %s", t->rank,
                            (*slot)->path, t->path),
                   -1;
        *slot = t;
    }
    for (int r = 0; r < c->world; r++)
        if (!c->by_rank[r])
            return snprintf(c->err, c->errlen,
                            "no trace for rank %d of world %d (%s is rank %d's; expected "
                            "rank%d.jsonl beside it)",
                            r, c->world, traces[0]->path, traces[0]->rank, r),
                   -1;
    return 0;
}

/* Every member of every group declares it with the same ranks. */
static int check_groups(checker *c)
{
    char a[200], b[200];
    for (int r = 0; r < c->world; r++) {
        const replay_trace *t = c->by_rank[r];
        for (size_t gi = 0; gi < t->ngroups; gi++) {
            const replay_group *g = &t->groups[gi];
            for (int k = 0; k < g->nranks; k++) {
                const replay_trace *m = c->by_rank[g->ranks[k]];
                long mi = replay_trace_group(m, g->id);
                ranks_text(g, a, sizeof a);
                if (mi < 0)
                    return snprintf(c->err, c->errlen,
                                    "group \"%.60s\": %s:%ld lists ranks [%s], but rank %d's trace "
                                    "%s does not declare the group",
                                    g->id, t->path, g->line, a, m->rank, m->path),
                           -1;
                const replay_group *h = &m->groups[mi];
                ranks_text(h, b, sizeof b);
                if (h->nranks != g->nranks ||
                    memcmp(h->ranks, g->ranks, (size_t)g->nranks * sizeof *g->ranks) != 0)
                    return snprintf(c->err, c->errlen,
                                    "group \"%.60s\": %s:%ld lists ranks [%s], %s:%ld lists [%s]",
                                    g->id, t->path, g->line, a, m->path, h->line, b),
                           -1;
            }
        }
    }
    return 0;
}

static void call_text(const replay_call *x, char *buf, size_t len)
{
    int k = snprintf(buf, len, "%s %s", replay_op_name(x->op), coll_dtype_name(x->dtype));
    if (replay_op_has_red(x->op))
        k += snprintf(buf + k, len - (size_t)k, " %s", coll_op_name(x->red));
    k += snprintf(buf + k, len - (size_t)k, " count %llu", (unsigned long long)x->count);
    if (replay_op_has_root(x->op)) snprintf(buf + k, len - (size_t)k, " root %d", x->root);
}

static const char *coll_differs(const replay_call *x, const replay_call *y)
{
    if (x->op != y->op) return "the op differs";
    if (x->dtype != y->dtype) return "the dtype differs";
    if (replay_op_has_red(x->op) && x->red != y->red) return "the reduction differs";
    /* an uneven all-to-all's count is this rank's mean: its splits are checked pair by pair */
    if (x->count != y->count && !(x->op == REPLAY_ALLTOALL && (x->sp.n || y->sp.n)))
        return "the count differs";
    if (replay_op_has_root(x->op) && x->root != y->root) return "the root differs";
    return NULL;
}

/* Next collective (not point-to-point) call of group gi from *i on, or NULL. */
static const replay_call *next_coll(const replay_trace *t, size_t gi, size_t *i)
{
    for (; *i < t->ncalls; (*i)++)
        if (t->calls[*i].group == gi && !replay_op_is_p2p(t->calls[*i].op))
            return &t->calls[(*i)++];
    return NULL;
}

static int compare_colls(checker *c, const replay_trace *a, size_t ga, const replay_trace *b,
                         size_t gb)
{
    const char *id = a->groups[ga].id;
    size_t ia = 0, ib = 0, k = 0;
    char ta[160], tb[160];
    for (;; k++) {
        const replay_call *x = next_coll(a, ga, &ia), *y = next_coll(b, gb, &ib);
        if (!x && !y) return 0;
        if (!x || !y) {
            const replay_trace *has = x ? a : b, *lacks = x ? b : a;
            const replay_call *extra = x ? x : y;
            call_text(extra, ta, sizeof ta);
            return snprintf(c->err, c->errlen,
                            "group \"%.60s\": %s makes %zu collective calls in the group, %s more: "
                            "%s seq %lld (line %ld, %s) has no partner in %s",
                            id, lacks->path, k, has->path, has->path, (long long)extra->seq,
                            extra->line, ta, lacks->path),
                   -1;
        }
        const char *why = coll_differs(x, y);
        if (!why) continue;
        call_text(x, ta, sizeof ta);
        call_text(y, tb, sizeof tb);
        return snprintf(c->err, c->errlen,
                        "group \"%.60s\": collective call %zu of the group: %s seq %lld (line %ld) "
                        "is %s, %s seq %lld (line %ld) is %s: %s",
                        id, k, a->path, (long long)x->seq, x->line, ta, b->path, (long long)y->seq,
                        y->line, tb, why),
               -1;
    }
}

/* Each all-to-all of group g on every member at once: what group rank a sends
 * b is what b receives from a (splits, or the count of an even one). */
static int check_alltoall(checker *c, const replay_group *g)
{
    int n = g->nranks, rc = 0;
    const replay_trace **t = calloc((size_t)n, sizeof *t);
    size_t *gi = calloc((size_t)n, sizeof *gi), *at = calloc((size_t)n, sizeof *at), k = 0;
    const replay_call **x = calloc((size_t)n, sizeof *x);
    if (!t || !gi || !at || !x) rc = -1, snprintf(c->err, c->errlen, "out of memory");
    for (int m = 0; !rc && m < n; m++) {
        t[m] = c->by_rank[g->ranks[m]];
        gi[m] = (size_t)replay_trace_group(t[m], g->id);
    }
    /* compare_colls has matched the members' collective calls one for one */
    for (; !rc; k++) {
        for (int m = 0; m < n; m++) x[m] = next_coll(t[m], gi[m], &at[m]);
        if (!x[0]) break;
        if (x[0]->op != REPLAY_ALLTOALL) continue;
        for (int a = 0; a < n && !rc; a++)
            for (int b = 0; b < n && !rc; b++) {
                uint64_t sent = replay_call_split(x[a], b, 0), got = replay_call_split(x[b], a, 1);
                if (sent == got) continue;
                rc = -1;
                snprintf(c->err, c->errlen,
                         "group \"%.60s\": collective call %zu of the group, an alltoall: group "
                         "rank %d (%s seq %lld, line %ld) sends %llu elements to group rank %d, "
                         "which (%s seq %lld, line %ld) receives %llu from it",
                         g->id, k, a, t[a]->path, (long long)x[a]->seq, x[a]->line,
                         (unsigned long long)sent, b, t[b]->path, (long long)x[b]->seq, x[b]->line,
                         (unsigned long long)got);
            }
    }
    free(t), free(gi), free(at), free(x);
    return rc;
}

/* One member's point-to-point calls of a group, bucketed by peer (group rank)
 * in call order: send[start[p] .. start[p+1]) are indices into calls. */
typedef struct p2p_index {
    size_t *send, *recv;
    size_t *send_start, *recv_start; /* nranks + 1 each */
} p2p_index;

static void p2p_free(p2p_index *x)
{
    free(x->send), free(x->recv), free(x->send_start), free(x->recv_start);
}

static int p2p_build(const replay_trace *t, size_t gi, int nranks, p2p_index *x)
{
    size_t ns = 0, nr = 0;
    for (size_t i = 0; i < t->ncalls; i++)
        if (t->calls[i].group == gi && replay_op_is_p2p(t->calls[i].op))
            t->calls[i].op == REPLAY_SEND ? ns++ : nr++;
    x->send = calloc(ns + 1, sizeof *x->send);
    x->recv = calloc(nr + 1, sizeof *x->recv);
    x->send_start = calloc((size_t)nranks + 1, sizeof *x->send_start);
    x->recv_start = calloc((size_t)nranks + 1, sizeof *x->recv_start);
    if (!x->send || !x->recv || !x->send_start || !x->recv_start) return -1;
    for (size_t i = 0; i < t->ncalls; i++) { /* counts, then prefix sums, then fill */
        const replay_call *k = &t->calls[i];
        if (k->group == gi && replay_op_is_p2p(k->op))
            (k->op == REPLAY_SEND ? x->send_start : x->recv_start)[k->peer + 1]++;
    }
    for (int p = 0; p < nranks; p++) {
        x->send_start[p + 1] += x->send_start[p];
        x->recv_start[p + 1] += x->recv_start[p];
    }
    size_t *fill_s = calloc((size_t)nranks, sizeof *fill_s),
           *fill_r = calloc((size_t)nranks, sizeof *fill_r);
    if (!fill_s || !fill_r) return free(fill_s), free(fill_r), -1;
    for (size_t i = 0; i < t->ncalls; i++) {
        const replay_call *k = &t->calls[i];
        if (k->group != gi || !replay_op_is_p2p(k->op)) continue;
        if (k->op == REPLAY_SEND) x->send[x->send_start[k->peer] + fill_s[k->peer]++] = i;
        else x->recv[x->recv_start[k->peer] + fill_r[k->peer]++] = i;
    }
    free(fill_s);
    free(fill_r);
    return 0;
}

/* The sends of member a to b against the receives of b from a. */
static int compare_pair(checker *c, const replay_group *g, const replay_trace *ta,
                        const p2p_index *xa, int a, const replay_trace *tb, const p2p_index *xb,
                        int b)
{
    size_t ns = xa->send_start[b + 1] - xa->send_start[b];
    size_t nr = xb->recv_start[a + 1] - xb->recv_start[a];
    for (size_t i = 0; i < ns || i < nr; i++) {
        const replay_call *s = i < ns ? &ta->calls[xa->send[xa->send_start[b] + i]] : NULL;
        const replay_call *r = i < nr ? &tb->calls[xb->recv[xb->recv_start[a] + i]] : NULL;
        if (!s || !r) {
            const replay_call *x = s ? s : r;
            return snprintf(c->err, c->errlen,
                            "group \"%.60s\": group rank %d sends %zu messages to group rank %d, "
                            "which receives %zu from it: %s seq %lld (line %ld, %s count %llu) has "
                            "no partner",
                            g->id, a, ns, b, nr, s ? ta->path : tb->path, (long long)x->seq,
                            x->line, replay_op_name(x->op), (unsigned long long)x->count),
                   -1;
        }
        if (s->count == r->count && s->dtype == r->dtype) continue;
        return snprintf(
                   c->err, c->errlen,
                   "group \"%.60s\": send %zu from group rank %d to %d (%s seq %lld, line %ld: "
                   "%s count %llu) and its receive (%s seq %lld, line %ld: %s count %llu): "
                   "the %s differs",
                   g->id, i, a, b, ta->path, (long long)s->seq, s->line, coll_dtype_name(s->dtype),
                   (unsigned long long)s->count, tb->path, (long long)r->seq, r->line,
                   coll_dtype_name(r->dtype), (unsigned long long)r->count,
                   s->count != r->count ? "count" : "dtype"),
               -1;
    }
    return 0;
}

static int check_p2p(checker *c, const replay_group *g)
{
    p2p_index *x = calloc((size_t)g->nranks, sizeof *x);
    int rc = x ? 0 : -1;
    for (int k = 0; k < g->nranks && rc == 0; k++) {
        const replay_trace *t = c->by_rank[g->ranks[k]];
        rc = p2p_build(t, (size_t)replay_trace_group(t, g->id), g->nranks, &x[k]);
    }
    if (rc) snprintf(c->err, c->errlen, "out of memory");
    for (int a = 0; a < g->nranks && rc == 0; a++)
        for (int b = 0; b < g->nranks && rc == 0; b++)
            if (a != b)
                rc = compare_pair(c, g, c->by_rank[g->ranks[a]], &x[a], a, c->by_rank[g->ranks[b]],
                                  &x[b], b);
    for (int k = 0; x && k < g->nranks; k++) p2p_free(&x[k]);
    free(x);
    return rc;
}

/* Each group once, from its group rank 0's trace. */
static int check_calls(checker *c)
{
    for (int r = 0; r < c->world; r++) {
        const replay_trace *t = c->by_rank[r];
        for (size_t gi = 0; gi < t->ngroups; gi++) {
            const replay_group *g = &t->groups[gi];
            if (g->ranks[0] != r) continue;
            for (int k = 1; k < g->nranks; k++) {
                const replay_trace *m = c->by_rank[g->ranks[k]];
                if (compare_colls(c, t, gi, m, (size_t)replay_trace_group(m, g->id))) return -1;
            }
            if (check_alltoall(c, g) || check_p2p(c, g)) return -1;
        }
    }
    return 0;
}

int replay_trace_check(replay_trace *const *traces, size_t n, replay_trace **by_rank, char *err,
                       size_t errlen)
{
    checker c = {.err = err, .errlen = errlen};
    if (n == 0) return snprintf(err, errlen, "no traces"), -1;
    int rc = check_world(&c, traces, n);
    if (rc == 0) rc = check_groups(&c);
    if (rc == 0) rc = check_calls(&c);
    if (rc == 0 && by_rank) memcpy(by_rank, c.by_rank, (size_t)c.world * sizeof *by_rank);
    free(c.by_rank);
    return rc;
}

int replay_trace_replayable(const replay_trace *t, char *err, size_t errlen)
{
    for (size_t i = 0; i < t->ncalls; i++) {
        const replay_call *x = &t->calls[i];
        if (x->op != REPLAY_GATHER && x->op != REPLAY_SCATTER) continue;
        return snprintf(err, errlen,
                        "%s:%ld: seq %lld: %s: libcoll has no %s, so collbench replay cannot "
                        "replay this trace",
                        t->path, x->line, (long long)x->seq, replay_op_name(x->op),
                        replay_op_name(x->op)),
               -1;
    }
    return 0;
}
