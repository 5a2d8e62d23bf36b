/* Collective signatures: names, comparison and a readable form for the
 * mismatch messages every rank prints. */
#include <stdio.h>

#include "core/sig.h"
#include "coll.h"

static const char *const kind_names[COLL_KIND_COUNT] = {
    [COLL_KIND_ALLREDUCE] = "allreduce",
    [COLL_KIND_ALLGATHER] = "allgather",
    [COLL_KIND_REDUCESCATTER] = "reducescatter",
    [COLL_KIND_BROADCAST] = "broadcast",
    [COLL_KIND_REDUCE] = "reduce",
    [COLL_KIND_ALLTOALL] = "alltoall",
    [COLL_KIND_BARRIER] = "barrier",
    [COLL_KIND_P2P] = "p2p",
};

const char *coll__kind_name(coll__kind k)
{
    return (int)k >= 0 && k < COLL_KIND_COUNT ? kind_names[k] : "invalid-kind";
}

static int kind_has_op(unsigned kind)
{
    return kind == COLL_KIND_ALLREDUCE || kind == COLL_KIND_REDUCESCATTER ||
           kind == COLL_KIND_REDUCE;
}

static int kind_has_root(unsigned kind)
{
    return kind == COLL_KIND_BROADCAST || kind == COLL_KIND_REDUCE;
}

/* A barrier moves no data: its count and dtype mean nothing. */
static int kind_has_data(unsigned kind) { return kind != COLL_KIND_BARRIER; }

int coll__sig_equal(const coll__sig *a, const coll__sig *b)
{
    if (a->seq != b->seq || a->kind != b->kind) return 0;
    if (kind_has_data(a->kind) && (a->count != b->count || a->dtype != b->dtype)) return 0;
    if (kind_has_op(a->kind) && a->op != b->op) return 0;
    if (kind_has_root(a->kind) && a->root != b->root) return 0;
    return 1;
}

void coll__sig_format(const coll__sig *s, char *buf, size_t len)
{
    char op[32] = "", root[32] = "";
    if (!buf || len == 0) return;
    if (kind_has_op(s->kind)) snprintf(op, sizeof op, ", %s", coll_op_name((coll_op)s->op));
    if (kind_has_root(s->kind)) snprintf(root, sizeof root, ", root=%d", (int)s->root);
    if (kind_has_data(s->kind))
        snprintf(buf, len, "%s(count=%llu, %s%s%s) #%u", coll__kind_name((coll__kind)s->kind),
                 (unsigned long long)s->count, coll_dtype_name((coll_dtype)s->dtype), op, root,
                 (unsigned)s->seq);
    else snprintf(buf, len, "%s() #%u", coll__kind_name((coll__kind)s->kind), (unsigned)s->seq);
}
