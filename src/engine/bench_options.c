/* Option parsing for the collective commands: a table of flags, one small
 * handler per flag, then a finishing pass for what depends on several flags
 * (the size sweep, dtype/op pairs, sizes against dtype sizes). */
#include "engine/bench_options.h"
#include "engine/opt_table.h"

#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "engine/bench_data.h"
#include "engine/sizes.h"
#include "engine/soak.h"
#include "coll_tool.h"
#include "core/hostport.h"

#define MAX_PROCS 1024

static const uint64_t default_sizes[] = {1ULL << 20, 10ULL << 20, 100ULL << 20, 1ULL << 30};
static const int default_procs[] = {2, 4, 6};

/* Flags whose meaning depends on others, kept until the finishing pass. */
typedef struct raw_opts {
    int have_b, have_e, have_f, have_i, have_sizes;
    uint64_t minbytes, maxbytes, stepbytes;
    long stepfactor;
    uint64_t *sizes;
    size_t nsizes;
    char dtypes[128], ops[64];
} raw_opts;

/* What the handlers see through bench_opt_ctx.user. */
typedef struct parse_state {
    bench_options *o;
    raw_opts raw;
} parse_state;

#define ST(c) ((parse_state *)(c)->user)
#define fail bench_opt_fail

/* ---- one handler per flag ---- */

static int on_minbytes(bench_opt_ctx *c, const char *v)
{
    ST(c)->raw.have_b = 1;
    return bench_opt_size(c, v, &ST(c)->raw.minbytes);
}
static int on_maxbytes(bench_opt_ctx *c, const char *v)
{
    ST(c)->raw.have_e = 1;
    return bench_opt_size(c, v, &ST(c)->raw.maxbytes);
}
static int on_stepfactor(bench_opt_ctx *c, const char *v)
{
    ST(c)->raw.have_f = 1;
    return bench_opt_long(c, v, 2, 1 << 20, &ST(c)->raw.stepfactor);
}
static int on_stepbytes(bench_opt_ctx *c, const char *v)
{
    ST(c)->raw.have_i = 1;
    return bench_opt_size(c, v, &ST(c)->raw.stepbytes);
}
static int on_sizes(bench_opt_ctx *c, const char *v)
{
    char why[128];
    free(ST(c)->raw.sizes);
    ST(c)->raw.sizes = NULL;
    ST(c)->raw.have_sizes = 1;
    if (bench_parse_size_list(v, &ST(c)->raw.sizes, &ST(c)->raw.nsizes, why, sizeof why) != 0)
        return fail(c, "%s", why);
    for (size_t i = 0; i < ST(c)->raw.nsizes; i++)
        if (ST(c)->raw.sizes[i] == 0) return fail(c, "'%s': a size must be at least 1 byte", v);
    if (ST(c)->raw.nsizes > BENCH_MAX_SIZES) return fail(c, "more than %d sizes", BENCH_MAX_SIZES);
    return 0;
}
static int on_iters(bench_opt_ctx *c, const char *v)
{
    return bench_opt_int(c, v, 1, 1 << 24, &ST(c)->o->iters);
}
static int on_warmup(bench_opt_ctx *c, const char *v)
{
    return bench_opt_int(c, v, 0, 1 << 24, &ST(c)->o->warmup);
}
static int on_check(bench_opt_ctx *c, const char *v)
{
    return bench_opt_int(c, v, 0, 1 << 24, &ST(c)->o->check);
}
static int on_root(bench_opt_ctx *c, const char *v)
{
    return bench_opt_int(c, v, 0, MAX_PROCS - 1, &ST(c)->o->root);
}
static int on_dtype(bench_opt_ctx *c, const char *v)
{
    return bench_opt_text(c, v, ST(c)->raw.dtypes, sizeof ST(c)->raw.dtypes);
}
static int on_op(bench_opt_ctx *c, const char *v)
{
    return bench_opt_text(c, v, ST(c)->raw.ops, sizeof ST(c)->raw.ops);
}
static int on_timeout(bench_opt_ctx *c, const char *v)
{
    return bench_opt_double(c, v, 0, 1, BENCH_MAX_TIMEOUT_S, 0, &ST(c)->o->timeout_s);
}
static int on_budget(bench_opt_ctx *c, const char *v)
{
    return bench_opt_double(c, v, 0, 0, INFINITY, 0, &ST(c)->o->time_budget_s);
}
static int on_duration(bench_opt_ctx *c, const char *v)
{
    if (bench_parse_duration(v, &ST(c)->o->duration_s) != 0)
        return fail(c, "'%s' is not a duration (seconds, or a number with s, m or h: 60s, 10m, 1h)",
                    v);
    return 0;
}
static int on_json(bench_opt_ctx *c, const char *v)
{
    return bench_opt_file(c, v, &ST(c)->o->json_path);
}
static int on_csv(bench_opt_ctx *c, const char *v)
{
    return bench_opt_file(c, v, &ST(c)->o->csv_path);
}
static int on_per_iter(bench_opt_ctx *c, const char *v)
{
    return bench_opt_file(c, v, &ST(c)->o->per_iter_path);
}
/* env://, tcp://host:port or tcp://[ipv6]:port (port 1-65535) or file:///path, as in
 * torch.distributed. */
static int on_init_method(bench_opt_ctx *c, const char *v)
{
    if (strcmp(v, "env://") == 0) {
        ST(c)->o->init_method = v;
        return 0;
    }
    if (strncmp(v, "tcp://", 6) == 0) {
        char host[COLL_HOSTPORT_MAX], why[COLL_HOSTPORT_MAX + 100];
        int port;
        if (coll__hostport_parse(v + 6, host, sizeof host, &port, why, sizeof why))
            return fail(c, "expected tcp://host:port or tcp://[ipv6]:port: %s", why);
        ST(c)->o->init_method = v;
        return 0;
    }
    if (strncmp(v, "file://", 7) == 0) {
        if (v[7] == '\0') return fail(c, "'%s': expected file:///path", v);
        ST(c)->o->init_method = v;
        return 0;
    }
    return fail(c, "'%s' is not an init method (env://, tcp://host:port, file:///path)", v);
}
/* The launcher pins the ranks it starts from $COLL_BIND (coll_tool.h: coll_bind_*). */
static int on_bind(bench_opt_ctx *c, const char *v)
{
    coll_bind_mode m;
    if (coll_bind_parse(v, &m) != COLL_OK) return fail(c, "'%s' is not core or none", v);
    setenv(COLL_ENV_BIND, coll_bind_name(m), 1);
    return 0;
}
static int on_quiet(bench_opt_ctx *c, const char *v)
{
    (void)v;
    ST(c)->o->quiet = 1;
    return 0;
}
static int on_force_memory(bench_opt_ctx *c, const char *v)
{
    (void)v;
    ST(c)->o->force_memory = 1;
    return 0;
}
static int on_same_ranks(bench_opt_ctx *c, const char *v)
{
    (void)v;
    ST(c)->o->same_ranks = 1;
    return 0;
}
static int on_passes(bench_opt_ctx *c, const char *v)
{
    return bench_opt_int(c, v, 1, 16, &ST(c)->o->passes);
}
static int on_stop_spread(bench_opt_ctx *c, const char *v)
{
    return bench_opt_double(c, v, 0, 0, 1, 1, &ST(c)->o->stop_spread);
}
/* An environment variable, so that the ranks this process launches see it too. */
static int on_insecure(bench_opt_ctx *c, const char *v)
{
    (void)c, (void)v;
    return setenv("COLL_INSECURE", "1", 1) == 0 ? 0 : COLL_ESYS;
}
static int on_verbose(bench_opt_ctx *c, const char *v)
{
    (void)v;
    ST(c)->o->verbose = 1;
    return 0;
}

static int on_procs(bench_opt_ctx *c, const char *v)
{
    return bench_opt_procs(c, v, MAX_PROCS, &ST(c)->o->procs, &ST(c)->o->nprocs);
}

static void list_backends(char *buf, size_t len)
{
    buf[0] = '\0';
    for (const char *const *b = coll_backend_names(); *b; b++) {
        size_t used = strlen(buf);
        snprintf(buf + used, len - used, "%s%s", used ? ", " : "", *b);
    }
}

static void free_backends(bench_options *o)
{
    for (size_t i = 0; i < o->nbackends; i++) free(o->backends[i]);
    o->nbackends = 0;
}

static int on_backend(bench_opt_ctx *c, const char *v)
{
    char *copy = strdup(v), *save = NULL, known[128];
    if (!copy) return fail(c, "out of memory");
    free_backends(ST(c)->o);
    int rc = 0;
    for (char *tok = strtok_r(copy, ",", &save); tok && rc == 0; tok = strtok_r(NULL, ",", &save)) {
        if (!coll_backend_known(tok)) {
            list_backends(known, sizeof known);
            rc = fail(c, "unknown backend '%s' (known: %s)", tok, known);
        } else if (ST(c)->o->nbackends == BENCH_MAX_BACKENDS) {
            rc = fail(c, "more than %d backends", BENCH_MAX_BACKENDS);
        } else {
            ST(c)->o->backends[ST(c)->o->nbackends++] = strdup(tok);
        }
    }
    if (rc == 0 && ST(c)->o->nbackends == 0) rc = fail(c, "no backend in '%s'", v);
    free(copy);
    return rc;
}

static int on_algo(bench_opt_ctx *c, const char *v)
{
    if (strcmp(v, "auto") != 0 && !coll_algo_supported(ST(c)->o->coll->name, v)) {
        const char *names = coll_algo_names(ST(c)->o->coll->name);
        return fail(c, "'%s' is not an algorithm of %s (%s)", v, ST(c)->o->coll->name,
                    names && *names ? names : "auto");
    }
    return bench_opt_text(c, v, ST(c)->o->algo, sizeof ST(c)->o->algo);
}

static int on_device(bench_opt_ctx *c, const char *v)
{
    if (strcmp(v, "cpu") != 0 && strcmp(v, "cuda") != 0)
        return fail(c, "'%s' is not a device (cpu, cuda)", v);
    return bench_opt_text(c, v, ST(c)->o->device, sizeof ST(c)->o->device);
}

static int on_inplace(bench_opt_ctx *c, const char *v)
{
    if (strcmp(v, "0") != 0 && strcmp(v, "1") != 0 && strcmp(v, "2") != 0)
        return fail(c, "'%s' is not 0 (out-of-place), 1 (in-place) or 2 (both)", v);
    ST(c)->o->inplace = v[0] - '0';
    return 0;
}

static int on_buffers(bench_opt_ctx *c, const char *v)
{
    if (strcmp(v, "coll") != 0 && strcmp(v, "malloc") != 0 && strcmp(v, "thp") != 0)
        return fail(c, "'%s' is not a buffer kind (malloc, thp, coll)", v);
    ST(c)->o->buffers_given = 1;
    return bench_opt_text(c, v, ST(c)->o->buffers, sizeof ST(c)->o->buffers);
}

static int on_seed(bench_opt_ctx *c, const char *v) { return bench_opt_u64(c, v, &ST(c)->o->seed); }

static const bench_opt opt_table[] = {
    {'b', "minbytes", "SIZE", on_minbytes, "smallest size (K/M/G = powers of 1024)"},
    {'e', "maxbytes", "SIZE", on_maxbytes, "largest size"},
    {'f', "stepfactor", "N", on_stepfactor, "multiply the size by N between -b and -e (default 2)"},
    {'i', "stepbytes", "SIZE", on_stepbytes, "add SIZE between -b and -e instead of -f"},
    {0, "sizes", "LIST", on_sizes, "sizes to run (default 1M,10M,100M,1G)"},
    {'n', "iters", "N", on_iters, "timed iterations per size (default 20)"},
    {'w', "warmup", "N", on_warmup, "warm-up iterations per size (default 5)"},
    {'c', "check", "N", on_check, "checked iterations per size, 0 for none (default 1)"},
    {'d', "dtype", "LIST", on_dtype,
     "float32 float64 float16 bfloat16 int8 uint8 int32 int64, or all"},
    {'o', "op", "LIST", on_op, "sum prod min max avg, or all (default sum)"},
    {'r', "root", "RANK", on_root, "root of broadcast and reduce (default 0)"},
    {'T', "timeout", "SECONDS", on_timeout, "give up on a blocked collective (default 300)"},
    {'J', "json", "FILE", on_json, "write results as JSON"},
    {0, "csv", "FILE", on_csv, "append results as CSV"},
    {0, "per-iter", "FILE", on_per_iter, "append every iteration's time on every rank as CSV"},
    {'P', "procs", "LIST", on_procs, "process counts to sweep (default 2,4,6)"},
    {0, "init-method", "URL", on_init_method,
     "env:// (default), tcp://host:port, file:///path (ranks of another launcher)"},
    {0, "backend", "LIST", on_backend,
     "backends to sweep (default: tcp shm auto gloo, those built; tcp with --algo)"},
    {0, "algo", "NAME", on_algo, "algorithm (default auto)"},
    {0, "device", "cpu|cuda", on_device, "where the buffers live (default cpu)"},
    {0, "inplace", "0|1|2", on_inplace, "out-of-place, in-place or both (default 2)"},
    {0, "buffers", "malloc|thp|coll", on_buffers,
     "host buffers: malloc (private, posix_memalign'd as a framework's tensors and every other "
     "benchmark's are; default), thp (private, in transparent huge pages: MADV_HUGEPAGE) or "
     "coll (coll_alloc, the backend's own memory: shm reads it without copies, like "
     "nccl-tests -R)"},
    {0, "seed", "N", on_seed, "seed of the checked inputs (default 1)"},
    {0, "time-budget", "SECONDS", on_budget,
     "fewer iterations past this per size, 0 = none (default 4)"},
    {0, "duration", "TIME", on_duration,
     "soak: repeat the sizes until TIME (60s, 10m, 1h) has passed; RSS and fds shown"},
    {0, "bind", "core|none", on_bind,
     "pin each rank to a core (default core for shm, auto and tcp, none for the others: "
     "see docs/PERFORMANCE.md)"},
    {0, "insecure", NULL, on_insecure,
     "let a job without a token listen on a non-loopback "
     "address, open to any host that reaches it ($COLL_INSECURE=1)"},
    {0, "force-memory", NULL, on_force_memory,
     "run even when the buffers of -P x --sizes exceed the memory this host has available "
     "(MemAvailable, the cgroup's memory.max): by default such a run is refused before any "
     "rank allocates"},
    {0, "same-ranks", NULL, on_same_ranks,
     "launch once per process count: its ranks make every "
     "backend's communicator and measure them size by size, each size on every backend in turn, "
     "in the same malloc buffers (one first touch instead of one per backend); mpi still runs "
     "under its own mpirun"},
    {0, "passes", "N", on_passes,
     "measure every backend of a launch N times (default 1), the "
     "order reversed every other pass (A B, B A, ...), so that a transient (a background job, a "
     "frequency change) lands on every backend or shows as a pass that disagrees; each pass "
     "writes its own rows, and the report claims a difference only when it holds in every pass"},
    {0, "stop-spread", "FRACTION", on_stop_spread,
     "end a size's timed iterations early (checked "
     "every 8) once their p25-p75 spread is at most FRACTION of the median, e.g. 0.05; "
     "0 = never (default)"},
    {'q', "quiet", NULL, on_quiet, "print nothing but errors"},
    {'v', "verbose", NULL, on_verbose, "add min/p50/p99/max columns"},
    {'h', "help", NULL, bench_opt_help, "this help"},
};
#define N_OPTS BENCH_OPT_COUNT(opt_table)

/* ---- finishing pass ---- */

static int push_size(bench_opt_ctx *c, uint64_t **v, size_t *n, uint64_t s)
{
    if (*n == BENCH_MAX_SIZES) return fail(c, "the sweep has more than %d sizes", BENCH_MAX_SIZES);
    uint64_t *grown = realloc(*v, (*n + 1) * sizeof **v);
    if (!grown) return fail(c, "out of memory");
    *v = grown;
    (*v)[(*n)++] = s;
    return 0;
}

static int build_sweep(bench_opt_ctx *c)
{
    raw_opts *r = &ST(c)->raw;
    uint64_t b = r->have_b ? r->minbytes : r->maxbytes, e = r->have_e ? r->maxbytes : r->minbytes;
    c->flag = r->have_b ? "-b" : "-e";
    if (b > e)
        return fail(c, "the smallest size (%llu) is larger than -e (%llu)", (unsigned long long)b,
                    (unsigned long long)e);
    c->flag = r->have_i ? "-i" : "-f";
    for (uint64_t s = b; s <= e;) {
        int rc = push_size(c, &ST(c)->o->sizes, &ST(c)->o->nsizes, s);
        if (rc) return rc;
        uint64_t next = r->have_i ? s + r->stepbytes
                                  : s * (uint64_t)(r->have_f ? r->stepfactor : 2);
        if (next <= s) break; /* overflow */
        s = next;
    }
    return 0;
}

static int finish_sizes(bench_opt_ctx *c)
{
    raw_opts *r = &ST(c)->raw;
    int stepped = r->have_b || r->have_e;
    if (r->have_f && r->have_i) return c->flag = "-i", fail(c, "cannot be combined with -f");
    if (r->have_sizes && (stepped || r->have_f || r->have_i))
        return c->flag = "--sizes", fail(c, "cannot be combined with -b/-e/-f/-i");
    if (!stepped && (r->have_f || r->have_i))
        return c->flag = r->have_f ? "-f" : "-i", fail(c, "needs -b and/or -e");
    if (!stepped && !r->have_sizes) return 0; /* defaults stay */
    free(ST(c)->o->sizes);
    ST(c)->o->sizes = NULL;
    ST(c)->o->nsizes = 0;
    ST(c)->o->sizes_flag = stepped ? "-b/-e" : "--sizes";
    if (stepped) return build_sweep(c);
    ST(c)->o->sizes = r->sizes;
    ST(c)->o->nsizes = r->nsizes;
    r->sizes = NULL;
    return 0;
}

/* Each comma-separated name of list ("all" for every one) through parse. */
static int parse_name_list(bench_opt_ctx *c, const char *what, const char *list, int count,
                           int (*parse)(const char *, int *), int *out, int *n, int *all)
{
    char copy[128], *save = NULL;
    *n = 0;
    *all = strcmp(list, "all") == 0;
    if (*all) {
        for (int i = 0; i < count; i++) out[(*n)++] = i;
        return 0;
    }
    snprintf(copy, sizeof copy, "%s", list);
    for (char *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        int v;
        if (parse(tok, &v) != 0) return fail(c, "unknown %s '%s'", what, tok);
        if (*n < count) out[(*n)++] = v;
    }
    if (*n == 0) return fail(c, "empty list '%s'", list);
    return 0;
}

static int dtype_parse_int(const char *s, int *out)
{
    coll_dtype dt;
    int rc = coll_dtype_parse(s, &dt);
    *out = (int)dt;
    return rc;
}

static int op_parse_int(const char *s, int *out)
{
    coll_op op;
    int rc = coll_op_parse(s, &op);
    *out = (int)op;
    return rc;
}

static int finish_pairs(bench_opt_ctx *c)
{
    int dts[COLL_DTYPE_COUNT], ops[COLL_OP_COUNT], ndt, nop, dt_all, op_all, rc;
    c->flag = "-d";
    if ((rc = parse_name_list(c, "dtype", ST(c)->raw.dtypes, COLL_DTYPE_COUNT, dtype_parse_int, dts,
                              &ndt, &dt_all)))
        return rc;
    c->flag = "-o";
    if ((rc = parse_name_list(c, "op", ST(c)->raw.ops, COLL_OP_COUNT, op_parse_int, ops, &nop,
                              &op_all)))
        return rc;
    ST(c)->o->npairs = 0;
    for (int i = 0; i < ndt; i++) {
        if (!ST(c)->o->coll->has_op) { /* -o is checked above but means nothing here */
            ST(c)->o->pairs[ST(c)->o->npairs++] = (bench_pair){(coll_dtype)dts[i], BENCH_OP_NONE};
            continue;
        }
        for (int j = 0; j < nop; j++) {
            if (coll_op_valid((coll_dtype)dts[i], (coll_op)ops[j]) == COLL_OK)
                ST(c)->o->pairs[ST(c)->o->npairs++] = (bench_pair){(coll_dtype)dts[i], ops[j]};
            else if (!dt_all && !op_all)
                return fail(c, "%s is not defined for %s (-d); avg needs a floating-point dtype",
                            coll_op_name((coll_op)ops[j]), coll_dtype_name((coll_dtype)dts[i]));
        }
    }
    if (ST(c)->o->npairs == 0)
        return fail(c, "no valid dtype/op pair in -d %s -o %s", ST(c)->raw.dtypes, ST(c)->raw.ops);
    return 0;
}

/* Every size must hold whole elements of every dtype it runs with. */
static int finish_size_multiples(bench_opt_ctx *c)
{
    if (!ST(c)->o->coll->moves_data) return 0;
    c->flag = ST(c)->raw.have_sizes ? "--sizes" : "-b/-e";
    for (size_t i = 0; i < ST(c)->o->nsizes; i++)
        for (size_t j = 0; j < ST(c)->o->npairs; j++) {
            size_t esz = coll_dtype_size(ST(c)->o->pairs[j].dtype);
            if (ST(c)->o->sizes[i] % esz != 0)
                return fail(c, "%llu bytes is not a multiple of the %s size (%zu)",
                            (unsigned long long)ST(c)->o->sizes[i],
                            coll_dtype_name(ST(c)->o->pairs[j].dtype), esz);
        }
    return 0;
}

/* --nnodes turns on the multi-host launcher; its companions mean nothing without it. */
static int finish_multinode(bench_opt_ctx *c)
{
    bench_options *o = ST(c)->o;
    if (bench_multinode_finish(&o->mn, MAX_PROCS, c->err, c->errlen)) return COLL_EINVAL;
    if (!o->mn.nnodes) return 0;
    o->procs[0] = o->mn.nproc_per_node; /* -P means the ranks of this host */
    o->nprocs = 1;
    return 0;
}

/* --device cuda buffers are cudaMalloc'd: a host kind would be a false label. */
static int finish_buffers(bench_opt_ctx *c)
{
    bench_options *o = ST(c)->o;
    if (strcmp(o->device, "cuda") != 0) return 0;
    if (o->buffers_given) {
        c->flag = "--buffers";
        return fail(c,
                    "'%s' is a host buffer kind; with --device cuda the buffers are device "
                    "memory (cudaMalloc)",
                    o->buffers);
    }
    snprintf(o->buffers, sizeof o->buffers, "cuda");
    return 0;
}

static int finish(bench_opt_ctx *c)
{
    int rc = finish_sizes(c);
    if (rc == 0) rc = finish_buffers(c);
    if (rc == 0) rc = finish_pairs(c);
    if (rc == 0) rc = finish_size_multiples(c);
    if (rc == 0) rc = finish_multinode(c);
    return rc;
}

/* ---- public ---- */

int bench_options_defaults(bench_options *o, const bench_coll *coll)
{
    memset(o, 0, sizeof *o);
    o->coll = coll;
    o->sizes = malloc(sizeof default_sizes);
    o->procs = malloc(sizeof default_procs);
    if (!o->sizes || !o->procs) return COLL_ENOMEM;
    memcpy(o->sizes, default_sizes, sizeof default_sizes);
    o->nsizes = sizeof default_sizes / sizeof default_sizes[0];
    memcpy(o->procs, default_procs, sizeof default_procs);
    o->nprocs = sizeof default_procs / sizeof default_procs[0];
    o->pairs[0] = (bench_pair){COLL_FLOAT32, coll->has_op ? COLL_SUM : BENCH_OP_NONE};
    o->npairs = 1;
    o->warmup = 5;
    o->iters = 20;
    o->check = 1;
    o->timeout_s = 300;
    o->time_budget_s = 4;
    o->passes = 1;
    snprintf(o->algo, sizeof o->algo, "auto");
    snprintf(o->device, sizeof o->device, "cpu");
    snprintf(o->buffers, sizeof o->buffers, "malloc");
    o->inplace = coll->has_inplace ? 2 : 0;
    o->seed = 1;
    return 0;
}

int bench_options_parse(bench_options *o, const bench_coll *coll, int argc, char **argv, char *err,
                        size_t errlen)
{
    parse_state st = {.o = o};
    bench_opt_ctx c = {
        .table = opt_table, .n = N_OPTS, .user = &st, .err = err, .errlen = errlen, .mn = &o->mn};
    int rc = bench_options_defaults(o, coll);
    if (rc) return snprintf(err, errlen, "out of memory"), rc;
    snprintf(st.raw.dtypes, sizeof st.raw.dtypes, "float32");
    snprintf(st.raw.ops, sizeof st.raw.ops, "sum");
    rc = bench_opt_parse(&c, argc, argv);
    if (rc == 0) rc = finish(&c);
    if (rc == 0 && o->inplace != 0 && !coll->has_inplace) {
        c.flag = "--inplace";
        rc = fail(&c, "%s has no in-place form; use --inplace 0", coll->name);
    }
    free(st.raw.sizes);
    return rc;
}

void bench_options_free(bench_options *o)
{
    free(o->sizes);
    free(o->procs);
    free_backends(o);
    o->sizes = NULL;
    o->procs = NULL;
}

void bench_options_usage(FILE *f, const bench_coll *coll)
{
    fprintf(f, "usage: collbench %s [options]\n%s.\n\noptions:\n", coll->name, coll->help);
    bench_opt_usage(f, opt_table, N_OPTS, 30);
    bench_multinode_usage(f, 30);
    const char *algos = coll_algo_names(coll->name);
    fprintf(f, "\nalgorithms of %s: %s\n", coll->name, algos && *algos ? algos : "auto");
    fprintf(f, "exit codes: 0 ok, 1 wrong results, 2 bad usage, 3 runtime failure, "
               "4 backend unavailable\n");
}

int bench_options_check_world(const bench_options *o, int world, char *err, size_t errlen)
{
    const bench_coll *c = o->coll;
    if (!c->moves_data || !c->count_per_rank || world < 1) return 0;
    for (size_t i = 0; i < o->nsizes; i++)
        for (size_t j = 0; j < o->npairs; j++) {
            size_t esz = coll_dtype_size(o->pairs[j].dtype);
            if (bench_coll_call_count(c, o->sizes[i], esz, world) > 0) continue;
            snprintf(err, errlen,
                     "%s: %llu bytes is less than one %s (%zu bytes) for each of %d ranks: %s at "
                     "%d ranks needs at least %llu bytes",
                     o->sizes_flag ? o->sizes_flag : "--sizes", (unsigned long long)o->sizes[i],
                     coll_dtype_name(o->pairs[j].dtype), esz, world, c->name, world,
                     (unsigned long long)esz * (unsigned long long)world);
            return COLL_EINVAL;
        }
    return 0;
}

int bench_options_check_procs(const bench_options *o, char *err, size_t errlen)
{
    for (size_t i = 0; i < o->nprocs; i++) {
        int world = o->mn.nnodes ? o->mn.nnodes * o->procs[i] : o->procs[i];
        int rc = bench_options_check_world(o, world, err, errlen);
        if (rc) return rc;
    }
    return 0;
}

int bench_options_largest_procs(const bench_options *o)
{
    int m = 0;
    for (size_t i = 0; i < o->nprocs; i++)
        if (o->procs[i] > m) m = o->procs[i];
    return m;
}
