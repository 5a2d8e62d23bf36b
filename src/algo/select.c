/* Algorithm names, which collective has which algorithm, the tuning table
 * and the dispatch from (collective, algorithm) to the function. */
#include <string.h>
#include <strings.h>

#include "algo/algo.h"

const coll__algo_limits coll__algo_limits_default = {{
    [COLL__CROSS_PAIR_RING] = COLL__CROSS_PAIR_RING_DEFAULT,
    [COLL__CROSS_ALLREDUCE_RHD] = COLL__CROSS_ALLREDUCE_RHD_DEFAULT,
    [COLL__CROSS_ALLREDUCE_RING] = COLL__CROSS_ALLREDUCE_RING_DEFAULT,
    [COLL__CROSS_ALLGATHER_RING] = COLL__CROSS_ALLGATHER_RING_DEFAULT,
    [COLL__CROSS_BROADCAST_RING] = COLL__CROSS_BROADCAST_RING_DEFAULT,
}};

static const char *const names[COLL_ALGO_COUNT] = {
    [COLL_ALGO_AUTO] = "auto",
    [COLL_ALGO_RING] = "ring",
    [COLL_ALGO_RHD] = "rhd",
    [COLL_ALGO_RD] = "rd",
    [COLL_ALGO_TREE] = "tree",
    [COLL_ALGO_PAIRWISE] = "pairwise",
    [COLL_ALGO_DISSEMINATION] = "dissemination",
    [COLL_ALGO_DIRECT] = "direct",
};

/* Other spellings users bring from MPI/NCCL vocabularies. */
static const struct {
    const char *name;
    coll__algo_id id;
} aliases[] = {
    {"rabenseifner", COLL_ALGO_RHD},
    {"halving-doubling", COLL_ALGO_RHD},
    {"recursive-doubling", COLL_ALGO_RD},
    {"binomial", COLL_ALGO_TREE},
    {"chain", COLL_ALGO_RING},
    {"pipeline", COLL_ALGO_RING},
    {"one-shot", COLL_ALGO_DIRECT},
};

/* Bit set of the algorithms each collective has (AUTO always). */
#define BIT(a) (1u << (a))
static const unsigned has[COLL_KIND_COUNT] = {
    [COLL_KIND_ALLREDUCE] = BIT(COLL_ALGO_RING) | BIT(COLL_ALGO_RHD) | BIT(COLL_ALGO_RD) |
                            BIT(COLL_ALGO_DIRECT),
    [COLL_KIND_ALLGATHER] = BIT(COLL_ALGO_RING) | BIT(COLL_ALGO_RD),
    [COLL_KIND_REDUCESCATTER] = BIT(COLL_ALGO_RING),
    [COLL_KIND_BROADCAST] = BIT(COLL_ALGO_TREE) | BIT(COLL_ALGO_RING),
    [COLL_KIND_REDUCE] = BIT(COLL_ALGO_TREE),
    [COLL_KIND_ALLTOALL] = BIT(COLL_ALGO_PAIRWISE) | BIT(COLL_ALGO_DIRECT), /* the same */
    [COLL_KIND_BARRIER] = BIT(COLL_ALGO_DISSEMINATION),
    [COLL_KIND_P2P] = 0,
};

/* The tuning table: the first row of the collective whose conditions hold. */
#define ANY_SIZE COLL__CROSS_COUNT
typedef struct tune_row {
    coll__kind kind;
    int below;     /* bytes < that crossover (ANY_SIZE: any size) */
    int pow2_only; /* world must be a power of two */
    int max_world; /* world <= max_world (0: any) */
    coll__algo_id algo;
} tune_row;

static const tune_row table[] = {
    /* 2 ranks: one exchange wins only while tiny, then the pipelined pair */
    {COLL_KIND_ALLREDUCE, COLL__CROSS_PAIR_RING, 0, 2, COLL_ALGO_RD},
    {COLL_KIND_ALLREDUCE, ANY_SIZE, 0, 2, COLL_ALGO_RING},
    {COLL_KIND_ALLREDUCE, COLL__CROSS_ALLREDUCE_RHD, 0, 0, COLL_ALGO_RD},
    {COLL_KIND_ALLREDUCE, COLL__CROSS_ALLREDUCE_RING, 0, 0, COLL_ALGO_RHD},
    {COLL_KIND_ALLREDUCE, ANY_SIZE, 0, 0, COLL_ALGO_RING},
    {COLL_KIND_ALLGATHER, COLL__CROSS_ALLGATHER_RING, 1, 0, COLL_ALGO_RD},
    {COLL_KIND_ALLGATHER, ANY_SIZE, 0, 0, COLL_ALGO_RING},
    {COLL_KIND_REDUCESCATTER, ANY_SIZE, 0, 0, COLL_ALGO_RING},
    {COLL_KIND_BROADCAST, COLL__CROSS_BROADCAST_RING, 0, 0, COLL_ALGO_TREE},
    {COLL_KIND_BROADCAST, ANY_SIZE, 0, 0, COLL_ALGO_RING},
    {COLL_KIND_REDUCE, ANY_SIZE, 0, 0, COLL_ALGO_TREE},
    {COLL_KIND_ALLTOALL, ANY_SIZE, 0, 0, COLL_ALGO_PAIRWISE},
    {COLL_KIND_BARRIER, ANY_SIZE, 0, 0, COLL_ALGO_DISSEMINATION},
};

static int is_pow2(int n) { return n > 0 && (n & (n - 1)) == 0; }

const char *coll__algo_name(coll__algo_id id)
{
    return (unsigned)id < COLL_ALGO_COUNT ? names[id] : "unknown";
}

int coll__algo_parse(const char *name, coll__algo_id *out)
{
    if (!name) return COLL_EINVAL;
    for (int i = 0; i < COLL_ALGO_COUNT; i++)
        if (!strcasecmp(name, names[i])) {
            *out = (coll__algo_id)i;
            return COLL_OK;
        }
    for (size_t i = 0; i < sizeof(aliases) / sizeof(aliases[0]); i++)
        if (!strcasecmp(name, aliases[i].name)) {
            *out = aliases[i].id;
            return COLL_OK;
        }
    return COLL_EINVAL;
}

int coll__algo_exists(coll__kind kind, coll__algo_id id)
{
    if ((unsigned)kind >= COLL_KIND_COUNT || (unsigned)id >= COLL_ALGO_COUNT) return 0;
    return id == COLL_ALGO_AUTO || (has[kind] & BIT(id)) != 0;
}

const char *coll__algo_list(coll__kind kind)
{
    static const char *const lists[COLL_KIND_COUNT] = {
        [COLL_KIND_ALLREDUCE] = "auto,ring,rhd,rd,direct",
        [COLL_KIND_ALLGATHER] = "auto,ring,rd",
        [COLL_KIND_REDUCESCATTER] = "auto,ring",
        [COLL_KIND_BROADCAST] = "auto,tree,ring",
        [COLL_KIND_REDUCE] = "auto,tree",
        [COLL_KIND_ALLTOALL] = "auto,pairwise,direct",
        [COLL_KIND_BARRIER] = "auto,dissemination",
        [COLL_KIND_P2P] = "auto",
    };
    return (unsigned)kind < COLL_KIND_COUNT ? lists[kind] : "";
}

coll__algo_id coll__algo_select(coll__kind kind, coll__algo_id requested, size_t bytes, int world,
                                const coll__algo_limits *lim)
{
    if (!lim) lim = &coll__algo_limits_default;
    if (requested != COLL_ALGO_AUTO && coll__algo_exists(kind, requested)) {
        /* rd all-gather needs a power-of-two world: ring is its fallback. */
        if (kind == COLL_KIND_ALLGATHER && requested == COLL_ALGO_RD && !is_pow2(world))
            return COLL_ALGO_RING;
        return requested;
    }
    for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++) {
        const tune_row *t = &table[i];
        if (t->kind != kind) continue;
        if (t->below != ANY_SIZE && bytes >= lim->from[t->below]) continue;
        if (t->pow2_only && !is_pow2(world)) continue;
        if (t->max_world && world > t->max_world) continue;
        return t->algo;
    }
    return COLL_ALGO_AUTO; /* p2p: nothing to choose */
}

size_t coll__algo_bytes(coll__kind kind, size_t count, coll_dtype dt, int world)
{
    size_t b = count * coll_dtype_size(dt);
    if (kind == COLL_KIND_ALLGATHER || kind == COLL_KIND_REDUCESCATTER ||
        kind == COLL_KIND_ALLTOALL)
        b *= (size_t)world;
    return b;
}

int coll__algo_run(coll__algo_ctx *c, coll__algo_id id, coll__kind kind, const void *sbuf,
                   void *rbuf, size_t count, coll_dtype dt, coll_op op, int root)
{
    if (!coll__algo_exists(kind, id) || id == COLL_ALGO_AUTO)
        id = coll__algo_select(kind, COLL_ALGO_AUTO, coll__algo_bytes(kind, count, dt, c->size),
                               c->size, c->limits);
    switch (kind) {
    case COLL_KIND_ALLREDUCE:
        if (id == COLL_ALGO_RHD) return coll__allreduce_rhd(c, sbuf, rbuf, count, dt, op);
        if (id == COLL_ALGO_RD) return coll__allreduce_rd(c, sbuf, rbuf, count, dt, op);
        if (id == COLL_ALGO_DIRECT) return coll__allreduce_direct(c, sbuf, rbuf, count, dt, op);
        return coll__allreduce_ring(c, sbuf, rbuf, count, dt, op);
    case COLL_KIND_ALLGATHER:
        if (id == COLL_ALGO_RD) return coll__allgather_rd(c, sbuf, rbuf, count, dt);
        return coll__allgather_ring(c, sbuf, rbuf, count, dt);
    case COLL_KIND_REDUCESCATTER: return coll__reducescatter_ring(c, sbuf, rbuf, count, dt, op);
    case COLL_KIND_BROADCAST:
        if (id == COLL_ALGO_RING) return coll__broadcast_ring(c, sbuf, rbuf, count, dt, root);
        return coll__broadcast_tree(c, sbuf, rbuf, count, dt, root);
    case COLL_KIND_REDUCE: return coll__reduce_tree(c, sbuf, rbuf, count, dt, op, root);
    case COLL_KIND_ALLTOALL: return coll__alltoall_pairwise(c, sbuf, rbuf, count, dt);
    case COLL_KIND_BARRIER: return coll__barrier_dissemination(c);
    default: return COLL_EINVAL; /* p2p is the backend's business */
    }
}
