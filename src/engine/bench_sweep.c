/* The sweep: dtype/op pairs x sizes x placements, and --duration. */
#include "engine/bench_run.h"

#include <stdio.h>
#include <string.h>

#include "engine/bench_data.h"
#include "engine/sizes.h"
#include "engine/soak.h"

static void size_label(bench_size *z, uint64_t bytes, int in_place)
{
    char human[24];
    bench_format_size(bytes, human, sizeof human);
    snprintf(z->label, sizeof z->label, "%s%s", human, in_place ? " in-place" : "");
}

static int run_placement(bench_run_state *s, bench_size *z, int in_place, bench_row *row)
{
    bench_runner *r = s->r;
    const bench_coll *coll = r->opts->coll;
    bench_call c = {.comm = r->comm,
                    .rank = r->rank,
                    .nranks = r->nranks,
                    .count = z->count,
                    .dtype = z->pair.dtype,
                    .root = r->opts->root,
                    .op = z->pair.op == BENCH_OP_NONE ? COLL_SUM : (coll_op)z->pair.op};
    bench_stats st;
    int64_t local_wrong = 0;
    int warmup, iters, rc;

    bench_coll_place(coll, &c, z->send, z->recv, in_place);
    size_label(z, z->asked, in_place);
    bench_run_row_config(s, &z->pair, row);
    row->in_place = in_place;
    row->bytes = bench_coll_bytes(coll, z->count, coll_dtype_size(c.dtype), r->nranks);
    row->count = coll->moves_data ? row->bytes / coll_dtype_size(c.dtype) : 0;

    /* inputs of the first check, which the first warm-up iteration makes */
    if (coll->moves_data &&
        (rc = bench_run_fill_inputs(s, z, &c, bench_run_checks_in_warm_up(r) ? 1 : 0)))
        return rc;
    if ((rc = bench_run_warm_up(s, z, &c, &warmup, &iters, &local_wrong))) return rc;
    if ((rc = bench_run_time_iterations(s, z, &c, &iters, row, &st))) return rc;
    row->warmup = warmup;
    row->iters = iters;
    bench_run_row_times(coll, &st, r->nranks, row);
    rc = bench_run_check_results(s, z, &c, local_wrong, &row->wrong);
    if (rc == 0 && row->wrong > 0) r->wrong += row->wrong;
    return rc;
}

/* A size that does not split into whole elements per rank is measured rounded
 * down (as nccl-tests do): the row's bytes are what was measured, and the table
 * says what was asked. */
static void note_rounded(bench_run_state *s, const bench_size *z)
{
    const bench_coll *coll = s->r->opts->coll;
    size_t esz = coll_dtype_size(z->pair.dtype);
    uint64_t measured = bench_coll_bytes(coll, z->count, esz, s->r->nranks);
    char text[256], human[24];
    if (!s->r->print || measured == z->asked) return;
    bench_format_size(z->asked, human, sizeof human);
    snprintf(text, sizeof text,
             "%s asked: %llu bytes measured (%s: %zu %s for each of %d ranks, whole elements)",
             human, (unsigned long long)measured, coll->name, z->count,
             coll_dtype_name(z->pair.dtype), s->r->nranks);
    bench_table_print_note(&s->table, text);
}

int bench_run_size(bench_run_state *s, const bench_pair *pair, uint64_t bytes)
{
    const bench_options *o = s->r->opts;
    bench_size z = {.pair = *pair, .asked = bytes};
    bench_row oop, ip;
    int rc;

    z.count = bench_coll_call_count(o->coll, bytes, coll_dtype_size(pair->dtype), s->r->nranks);
    size_label(&z, bytes, 0);
    rc = bench_run_alloc_size(s, &z);
    if (rc == 0 && z.skipped) {
        bench_run_free_size(s, &z);
        return 0;
    }
    if (rc == 0 && o->inplace != 1) rc = run_placement(s, &z, 0, &oop);
    if (rc == 0 && o->inplace != 0) rc = run_placement(s, &z, 1, &ip);
    if (rc == 0) {
        bench_run_emit_rows(s, o->inplace != 1 ? &oop : NULL, o->inplace != 0 ? &ip : NULL);
        note_rounded(s, &z);
    }
    bench_run_free_size(s, &z);
    return rc;
}

/* A dtype/op pair the backend refuses (gloo has no bfloat16 arithmetic): every
 * rank got the same refusal before anything was sent, and the communicator is
 * still usable (coll.h), so the pair's sizes from here on are skipped with a
 * note and the sweep goes on; no row is written for them. A refused --algo is
 * the user's to fix and still fails. Returns rc when it is not such a refusal. */
int bench_run_skip_refused(bench_run_state *s, const bench_pair *p, uint64_t bytes, int first,
                           int rc)
{
    const bench_runner *r = s->r;
    char text[480], what[64], human[24];
    if (rc != COLL_ENOTSUP || strcmp(r->opts->algo, "auto") != 0) return rc;
    if (r->print) {
        snprintf(what, sizeof what, "%s%s%s", coll_dtype_name(p->dtype),
                 p->op == BENCH_OP_NONE ? "" : " ",
                 p->op == BENCH_OP_NONE ? "" : coll_op_name((coll_op)p->op));
        bench_format_size(bytes, human, sizeof human);
        snprintf(text, sizeof text, "%s%s%s: skipped (%s)", what, first ? "" : " from ",
                 first ? "" : human, coll_comm_errmsg(r->comm));
        bench_run_progress_clear(s);
        bench_table_print_note(&s->table, text);
    }
    if (s->errlen) s->err[0] = '\0'; /* reported; nothing failed */
    return 0;
}

int bench_run_pairs(bench_run_state *s)
{
    const bench_options *o = s->r->opts;
    size_t nsizes;
    const uint64_t *sizes = bench_run_sizes(o, &nsizes);
    for (size_t p = 0; p < o->npairs; p++)
        for (size_t i = 0; i < nsizes; i++) {
            int rc = bench_run_size(s, &o->pairs[p], sizes[i]);
            if (rc == 0) continue;
            if ((rc = bench_run_skip_refused(s, &o->pairs[p], sizes[i], i == 0, rc))) return rc;
            break; /* the pair's larger sizes would be refused too */
        }
    return 0;
}

/* --duration: the sizes again and again, usage shown by the printing rank. */
static int run_pass(void *arg) { return bench_run_pairs(arg); }

int bench_run_soak(bench_run_state *s)
{
    bench_usage growth;
    return bench_soak_run(s->r->comm, s->r->opts->duration_s, run_pass, s,
                          s->r->print ? stdout : NULL, &growth);
}
