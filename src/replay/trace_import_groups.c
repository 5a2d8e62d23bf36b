/* The importer's groups (trace_import_groups.h): the rank and world of the
 * file, then per call the group of the trace it belongs to, created on first
 * use, and a warning line for every assumption. */
#ifdef COLL_HAVE_JANSSON

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "replay/trace_import_groups.h"

void replay_import_groups_free(import_groups *g) { (void)g; }

/* ---- distributedInfo's pg_config: a list of groups (or an object of them) ---- */

typedef struct pg {
    const char *name, *desc;
    int *ranks;
    int n;
} pg;

static int pg_at(json_t *cfg, size_t i, pg *out)
{
    json_t *o = json_is_array(cfg) ? json_array_get(cfg, i) : NULL;
    if (json_is_object(cfg)) {
        size_t k = 0;
        const char *key;
        json_t *v;
        json_object_foreach(cfg, key, v)
        {
            if (k++ == i) o = v;
        }
    }
    json_t *ranks = json_object_get(o, "ranks"), *r;
    json_t *name = json_object_get(o, "pg_name"), *desc = json_object_get(o, "pg_desc");
    if (!json_is_object(o) || !json_is_string(name) || !json_is_array(ranks)) return -1;
    out->name = json_string_value(name);
    out->desc = json_is_string(desc) ? json_string_value(desc) : "";
    out->n = (int)json_array_size(ranks);
    out->ranks = malloc((out->n ? (size_t)out->n : 1) * sizeof *out->ranks);
    if (!out->ranks) return -1;
    size_t j;
    json_array_foreach(ranks, j, r) out->ranks[j] = (int)json_integer_value(r);
    return 0;
}

static size_t pg_count(json_t *cfg)
{
    return json_is_array(cfg)    ? json_array_size(cfg)
           : json_is_object(cfg) ? json_object_size(cfg)
                                 : 0;
}

static int has_rank(const int *ranks, int n, int rank)
{
    for (int i = 0; i < n; i++)
        if (ranks[i] == rank) return 1;
    return 0;
}

/* ---- the trace's groups ---- */

/* The group with id (ranks must agree), created when new: its index, or -1. */
static long add_group(import_groups *g, const char *id, const char *desc, const int *ranks, int n,
                      const import_ev *e, char *err, size_t errlen)
{
    replay_trace *t = &g->im->t;
    long at = replay_trace_group(t, id);
    if (at >= 0) {
        replay_group *old = &t->groups[at];
        if (old->nranks != n || memcmp(old->ranks, ranks, (size_t)n * sizeof *ranks))
            return replay_import_bad(g->path, e, err, errlen,
                                     "group \"%.60s\" has %d ranks here and %d in an earlier event",
                                     id, n, old->nranks);
        return at;
    }
    int mine = -1;
    for (int i = 0; i < n; i++) {
        if (ranks[i] < 0 || ranks[i] >= t->world)
            return replay_import_bad(g->path, e, err, errlen,
                                     "group \"%.60s\" has rank %d, not a rank of world %d", id,
                                     ranks[i], t->world);
        for (int j = 0; j < i; j++)
            if (ranks[j] == ranks[i])
                return replay_import_bad(g->path, e, err, errlen,
                                         "group \"%.60s\" lists rank %d twice", id, ranks[i]);
        if (ranks[i] == t->rank) mine = i;
    }
    if (mine < 0)
        return replay_import_bad(g->path, e, err, errlen,
                                 "group \"%.60s\" does not hold this trace's rank %d (from %s)", id,
                                 t->rank, g->im->rank_from);
    replay_group *grown = realloc(t->groups, (t->ngroups + 1) * sizeof *grown);
    if (!grown) return replay_import_bad(g->path, e, err, errlen, "out of memory");
    t->groups = grown;
    replay_group *ng = &t->groups[t->ngroups];
    memset(ng, 0, sizeof *ng);
    ng->id = strdup(id);
    ng->desc = strdup(desc ? desc : "");
    ng->ranks = malloc((size_t)n * sizeof *ng->ranks);
    if (!ng->id || !ng->desc || !ng->ranks) {
        free(ng->id), free(ng->desc), free(ng->ranks);
        return replay_import_bad(g->path, e, err, errlen, "out of memory");
    }
    memcpy(ng->ranks, ranks, (size_t)n * sizeof *ranks);
    ng->nranks = n;
    ng->my_rank = mine;
    return (long)t->ngroups++;
}

/* 0..world-1 (malloc'd). */
static int *world_ranks(int world)
{
    int *r = malloc((size_t)world * sizeof *r);
    for (int i = 0; r && i < world; i++) r[i] = i;
    return r;
}

/* The trace format's id for a group torch did not name: "r0-2-3#0". */
static void ranks_id(const int *ranks, int n, char *id, size_t len)
{
    size_t k = (size_t)snprintf(id, len, "r");
    int *s = malloc((size_t)n * sizeof *s);
    if (!s) return;
    memcpy(s, ranks, (size_t)n * sizeof *s);
    for (int i = 1; i < n; i++)
        for (int j = i; j > 0 && s[j - 1] > s[j]; j--) {
            int x = s[j];
            s[j] = s[j - 1], s[j - 1] = x;
        }
    for (int i = 0; i < n && k < len; i++)
        k += (size_t)snprintf(id + k, len - k, "%s%d", i ? "-" : "", s[i]);
    if (k < len) snprintf(id + k, len - k, "#0");
    free(s);
}

/* A record_param_comms call: its group as the event names it, its ranks from
 * the event, else distributedInfo's pg_config, else the world when it is as
 * large. */
static long place_named(import_groups *g, import_call *c, char *err, size_t errlen)
{
    replay_trace *t = &g->im->t;
    const int *ranks = c->ranks;
    int n = c->nranks, *owned = NULL;
    const char *desc = c->pg_desc;
    pg p = {0};
    for (size_t i = 0; !ranks && c->pg_name && i < pg_count(g->pg_config); i++) {
        if (pg_at(g->pg_config, i, &p)) continue;
        if (strcmp(p.name, c->pg_name) == 0 && (c->size < 0 || p.n == c->size)) {
            ranks = owned = p.ranks, n = p.n;
            if (!desc) desc = p.desc;
        } else {
            free(p.ranks);
        }
    }
    if (!ranks && (c->size < 0 || c->size == t->world)) {
        ranks = owned = world_ranks(t->world), n = t->world;
        if (!owned) return replay_import_bad(g->path, c->ev, err, errlen, "out of memory");
        replay_import_warn(
            g->im,
            "%s: group \"%s\": its events list no ranks and distributedInfo has no pg_config "
            "naming it; it has as many ranks as the world, so assumed ranks 0..%d",
            g->path, c->pg_name ? c->pg_name : "?", t->world - 1);
    }
    if (!ranks)
        return replay_import_bad(
            g->path, c->ev, err, errlen,
            "group \"%.60s\" of %d ranks: the event does not list its ranks "
            "(\"Process Group Ranks\" empty or cut short, no rank stride) and the "
            "trace's distributedInfo has no pg_config naming it",
            c->pg_name ? c->pg_name : "", c->size);
    char id[256];
    if (c->pg_name && *c->pg_name) snprintf(id, sizeof id, "%s", c->pg_name);
    else ranks_id(ranks, n, id, sizeof id);
    long at = add_group(g, id, desc, ranks, n, c->ev, err, errlen);
    free(owned);
    return at;
}

/* A c10d or backend call, which names no group: the world group, or the one
 * group of its size with this rank in pg_config. */
static long place_unnamed(import_groups *g, import_call *c, int *placed_by_size, char *err,
                          size_t errlen)
{
    replay_trace *t = &g->im->t;
    *placed_by_size = 0;
    if (c->size < 0 || c->size == t->world) {
        int *ranks = world_ranks(t->world);
        if (!ranks) return replay_import_bad(g->path, c->ev, err, errlen, "out of memory");
        /* pg_config's default group, else its first of the world's size, else
         * "0", the name torch gives its default group */
        const char *first = NULL, *deflt = NULL;
        pg p = {0};
        for (size_t i = 0; i < pg_count(g->pg_config); i++) {
            if (pg_at(g->pg_config, i, &p)) continue;
            if (p.n == t->world && !first) first = p.name;
            if (p.n == t->world && !deflt && !strcmp(p.desc, "default_pg")) deflt = p.name;
            free(p.ranks);
        }
        const char *id = deflt ? deflt : first ? first : "0";
        long at = add_group(g, id,
                            "placed: no group name in the profiler event; assumed the world group",
                            ranks, t->world, c->ev, err, errlen);
        free(ranks);
        return at;
    }
    pg p = {0}, found = {0};
    int matches = 0;
    for (size_t i = 0; i < pg_count(g->pg_config); i++) {
        if (pg_at(g->pg_config, i, &p)) continue;
        if (p.n == c->size && has_rank(p.ranks, p.n, t->rank) && ++matches == 1) found = p;
        else free(p.ranks);
    }
    if (matches != 1) {
        free(found.ranks);
        return replay_import_bad(
            g->path, c->ev, err, errlen,
            "a %s in a group of %d ranks (world %d), which the event does not name, "
            "and distributedInfo's pg_config has %d groups of %d ranks with rank "
            "%d: cannot tell which group",
            replay_op_name(c->c.op), c->size, t->world, matches, c->size, t->rank);
    }
    char desc[512];
    snprintf(desc, sizeof desc,
             "placed: no group name in the profiler event; the only group of %d ranks with rank "
             "%d in distributedInfo's pg_config (%s)",
             c->size, t->rank, found.desc);
    long at = add_group(g, found.name, desc, found.ranks, found.n, c->ev, err, errlen);
    free(found.ranks);
    *placed_by_size = 1;
    return at;
}

/* The rank and world: distributedInfo's, else the group rank record_param_comms
 * gives ("Rank") in a group whose ranks it lists, else the caller's fallback. */
static int resolve_rank(import_groups *g, import_call *calls, size_t n, char *err, size_t errlen)
{
    replay_import *im = g->im;
    int rank = g->rank, world = g->world;
    if (rank >= 0) snprintf(im->rank_from, sizeof im->rank_from, "distributedInfo");
    for (size_t i = 0; rank < 0 && i < n; i++)
        if (calls[i].ranks && calls[i].rank_arg >= 0 && calls[i].rank_arg < calls[i].nranks) {
            rank = calls[i].ranks[calls[i].rank_arg];
            world = g->world_fallback;
            for (size_t j = 0; world < 0 && j < n; j++)
                if (calls[j].size > world) world = calls[j].size;
            snprintf(im->rank_from, sizeof im->rank_from, "the events' \"Rank\"");
        }
    if (rank < 0 && g->rank_fallback >= 0) {
        rank = g->rank_fallback, world = g->world_fallback;
        snprintf(im->rank_from, sizeof im->rank_from, "file order");
    }
    if (rank < 0)
        return snprintf(err, errlen,
                        "%s: the trace does not say its rank (no distributedInfo with rank and "
                        "world_size): give the files in rank order",
                        g->path),
               -1;
    if (world < 1 || rank >= world)
        return snprintf(err, errlen, "%s: rank %d (from %s) is not a rank of world %d", g->path,
                        rank, im->rank_from, world),
               -1;
    im->t.rank = rank, im->t.world = world;
    return 0;
}

/* One line per placed group: how many calls of which op, and why there. */
static void warn_placed(import_groups *g, size_t (*placed)[REPLAY_OP_COUNT], size_t nplaced,
                        int by_size_any)
{
    replay_trace *t = &g->im->t;
    for (size_t gi = 0; gi < nplaced; gi++) {
        char ops[512] = "";
        size_t k = 0, total = 0;
        for (int op = 0; op < REPLAY_OP_COUNT; op++)
            if (placed[gi][op] && k < sizeof ops) {
                k += (size_t)snprintf(ops + k, sizeof ops - k, "%s%s %zu", k ? ", " : "",
                                      replay_op_name((replay_op)op), placed[gi][op]);
                total += placed[gi][op];
            }
        if (!total) continue;
        replay_import_warn(
            g->im,
            "%s: %zu calls (%s) placed in group \"%s\" (%d ranks): the %s events do not name "
            "their group; %s",
            g->path, total, ops, t->groups[gi].id, t->groups[gi].nranks, g->kind_name,
            t->groups[gi].nranks == t->world ? "assumed the world group"
                                             : "the only group of that size with this rank");
    }
    size_t others = 0;
    pg p;
    for (size_t i = 0; i < pg_count(g->pg_config); i++)
        if (!pg_at(g->pg_config, i, &p)) {
            others += has_rank(p.ranks, p.n, t->rank);
            free(p.ranks);
        }
    if (others > 1 && !by_size_any)
        replay_import_warn(
            g->im,
            "%s: distributedInfo lists %zu groups with rank %d: calls the program made in "
            "another group of the world's size are in the world group here",
            g->path, others, t->rank);
}

int replay_import_groups_place(import_groups *g, import_call *calls, size_t n, char *err,
                               size_t errlen)
{
    if (resolve_rank(g, calls, n, err, errlen)) return -1;
    replay_trace *t = &g->im->t;
    size_t(*placed)[REPLAY_OP_COUNT] = NULL, nplaced = 0, reductions = 0;
    int by_size_any = 0, rc = 0;
    for (size_t i = 0; i < n && rc == 0; i++) {
        import_call *c = &calls[i];
        int by_size = 0, named = c->ev->kind == IMPORT_PARAM;
        long at = named ? place_named(g, c, err, errlen)
                        : place_unnamed(g, c, &by_size, err, errlen);
        if (at < 0) {
            rc = -1;
            break;
        }
        c->c.group = (size_t)at;
        const replay_group *grp = &t->groups[at];
        if (c->c.root >= grp->nranks || c->c.peer >= grp->nranks)
            rc = replay_import_bad(g->path, c->ev, err, errlen,
                                   "%s %d is not a rank of group \"%.60s\" (%d ranks)",
                                   c->c.root >= 0 ? "root" : "peer",
                                   c->c.root >= 0 ? c->c.root : c->c.peer, grp->id, grp->nranks);
        else if (c->c.peer == grp->my_rank)
            rc = replay_import_bad(g->path, c->ev, err, errlen, "a %s to or from this rank itself",
                                   replay_op_name(c->c.op));
        if (rc == 0 && c->c.op == REPLAY_ALLTOALL && !c->c.sp.n && c->size < 0) {
            if (c->c.in % (uint64_t)grp->nranks)
                rc = replay_import_bad(
                    g->path, c->ev, err, errlen,
                    "an all-to-all of %llu elements does not split evenly over the %d "
                    "ranks of group \"%.60s\"",
                    (unsigned long long)c->c.in, grp->nranks, grp->id);
            c->c.count = c->c.in / (uint64_t)grp->nranks;
        }
        reductions += replay_op_has_red(c->c.op) != 0;
        if (named) continue;
        by_size_any |= by_size;
        if (t->ngroups > nplaced) {
            size_t(*grown)[REPLAY_OP_COUNT] = realloc(placed, t->ngroups * sizeof *placed);
            if (!grown) {
                rc = replay_import_bad(g->path, c->ev, err, errlen, "out of memory");
                break;
            }
            placed = grown;
            memset(placed + nplaced, 0, (t->ngroups - nplaced) * sizeof *placed);
            nplaced = t->ngroups;
        }
        placed[at][c->c.op]++;
    }
    if (rc == 0 && placed) warn_placed(g, placed, nplaced, by_size_any);
    if (rc == 0 && reductions)
        replay_import_warn(
            g->im,
            "%s: %zu calls with a reduction: the profiler's events do not record the reduction "
            "op; assumed sum",
            g->path, reductions);
    free(placed);
    return rc;
}

#endif
