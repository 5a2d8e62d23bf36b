#include "train/train_options.h"

#include <stdlib.h>
#include <string.h>

#include "engine/opt_table.h"
#include "coll.h"
#include "core/errbuf.h"
#include "train/train_memory.h"

static void defaults(train_options *o, int quick)
{
    memset(o, 0, sizeof *o);
    o->kind = NET_MLP;
    o->input = 1024;
    o->image = 32;
    o->in_channels = 3;
    o->classes = 10;
    o->channels[0] = 32, o->channels[1] = 64, o->channels[2] = 128, o->nchannels = 3;
    o->hidden[0] = o->hidden[1] = 2048;
    o->nhidden = 2;
    static const train_mode modes[] = {MODE_SINGLE, MODE_ALLREDUCE_SYNC, MODE_DDP, MODE_PS};
    for (size_t i = 0; i < 4; i++) o->modes[i].mode = modes[i];
    o->nmodes = 4;
    o->batches[0] = 32, o->batches[1] = 64, o->batches[2] = 128;
    o->nbatches = quick ? 1 : 3;
    o->bucket_mb[0] = 25, o->nbucket = 1;
    o->first_bucket_mb = 1;
    o->ncompress = 1;
    o->steps = quick ? 10 : 20;
    o->warmup = quick ? 2 : 3;
    o->compute_steps = quick ? 5 : 10;
    o->check_every = 10;
    o->blas_threads = 1;
    o->seed = 1;
    o->lr = 0.01;
    o->momentum = 0.9;
    o->procs[0] = 1, o->procs[1] = 2, o->procs[2] = 4;
    o->nprocs = quick ? 2 : 3;
    o->timeout_s = 300;
    o->quick = quick;
}

/* Comma list of items, each parsed by one(); COLL_EINVAL on an empty item. */
static int each_item(const char *flag, const char *v, size_t *n,
                     int (*one)(const char *flag, const char *item, void *dst, size_t i, char *err,
                                size_t errlen),
                     void *dst, char *err, size_t errlen)
{
    char copy[512];
    if (strlen(v) >= sizeof copy)
        return coll__set_err(err, errlen, "%s: list too long", flag), COLL_EINVAL;
    strcpy(copy, v);
    *n = 0;
    char *p = copy;
    for (;;) {
        char *c = strchr(p, ',');
        if (c) *c = '\0';
        if (!*p) return coll__set_err(err, errlen, "%s: empty item in '%s'", flag, v), COLL_EINVAL;
        if (*n == TRAIN_MAX_LIST)
            return coll__set_err(err, errlen, "%s: more than %d items", flag, TRAIN_MAX_LIST),
                   COLL_EINVAL;
        int rc = one(flag, p, dst, *n, err, errlen);
        if (rc) return rc;
        (*n)++;
        if (!c) return 0;
        p = c + 1;
    }
}

static int one_size(const char *flag, const char *s, void *dst, size_t i, char *err, size_t errlen)
{
    bench_opt_ctx c = {.flag = flag, .err = err, .errlen = errlen};
    return bench_opt_int(&c, s, 1, 1 << 20, &((int *)dst)[i]);
}

static int one_proc(const char *flag, const char *s, void *dst, size_t i, char *err, size_t errlen)
{
    bench_opt_ctx c = {.flag = flag, .err = err, .errlen = errlen};
    return bench_opt_int(&c, s, 1, TRAIN_MAX_PROCS, &((int *)dst)[i]);
}

static int one_mode(const char *flag, const char *s, void *dst, size_t i, char *err, size_t errlen)
{
    (void)flag;
    return train_reducer_mode_parse(s, &((reducer_opts *)dst)[i], err, errlen);
}

static int one_compress(const char *flag, const char *s, void *dst, size_t i, char *err,
                        size_t errlen)
{
    (void)flag;
    return train_compress_parse(s, &((compress_spec *)dst)[i], err, errlen);
}

static int one_bucket(const char *flag, const char *s, void *dst, size_t i, char *err,
                      size_t errlen)
{
    bench_opt_ctx c = {.flag = flag, .err = err, .errlen = errlen};
    return bench_opt_double(&c, s, 0, 1, 1e6, 1, &((double *)dst)[i]);
}

static int one_backend(const char *flag, const char *s, void *dst, size_t i, char *err,
                       size_t errlen)
{
    int known = 0;
    char names[160] = "";
    for (const char *const *b = coll_backend_names(); *b; b++) {
        size_t used = strlen(names);
        known |= strcmp(*b, s) == 0;
        snprintf(names + used, sizeof names - used, "%s%s", used ? ", " : "", *b);
    }
    if (!known || i >= 8) {
        coll__set_err(err, errlen, "%s: '%s' is not a backend (%s)", flag, s, names);
        return COLL_EINVAL;
    }
    snprintf(((char(*)[16])dst)[i], 16, "%s", s);
    return 0;
}

/* ---- one handler per flag (c->user is the train_options) ---- */

#define TO(c) ((train_options *)(c)->user)

static int on_model(bench_opt_ctx *c, const char *v)
{
    train_options *o = TO(c);
    if (strcmp(v, "mlp") == 0) {
        o->kind = NET_MLP;
    } else if (strcmp(v, "cnn") == 0) {
        o->kind = NET_CNN;
        if (!o->nhidden || o->hidden[0] == 2048) o->hidden[0] = 512, o->nhidden = 1;
    } else {
        return bench_opt_fail(c, "'%s' is not mlp or cnn", v);
    }
    return 0;
}
#define LIST(name, field, count, one)                                                      \
    static int on_##name(bench_opt_ctx *c, const char *v)                                  \
    {                                                                                      \
        return each_item(c->flag, v, &TO(c)->count, one, TO(c)->field, c->err, c->errlen); \
    }
LIST(hidden, hidden, nhidden, one_size)
LIST(channels, channels, nchannels, one_size)
LIST(mode, modes, nmodes, one_mode)
LIST(batch_sizes, batches, nbatches, one_size)
LIST(bucket_mb, bucket_mb, nbucket, one_bucket)
LIST(compress, compress, ncompress, one_compress)
LIST(backend, backends, nbackends, one_backend)
#undef LIST
static int on_procs(bench_opt_ctx *c, const char *v)
{
    return each_item("-P", v, &TO(c)->nprocs, one_proc, TO(c)->procs, c->err, c->errlen);
}
static int on_first_bucket_mb(bench_opt_ctx *c, const char *v)
{
    return bench_opt_double(c, v, 0, 1, 1e6, 1, &TO(c)->first_bucket_mb);
}
static int on_lr(bench_opt_ctx *c, const char *v)
{
    return bench_opt_double(c, v, 0, 1, 1e6, 1, &TO(c)->lr);
}
static int on_momentum(bench_opt_ctx *c, const char *v)
{
    return bench_opt_double(c, v, 0, 0, 1, 1, &TO(c)->momentum);
}
static int on_timeout(bench_opt_ctx *c, const char *v)
{
    return bench_opt_double(c, v, 0, 1, BENCH_MAX_TIMEOUT_S, 0, &TO(c)->timeout_s);
}
static int on_csv(bench_opt_ctx *c, const char *v)
{
    return bench_opt_file(c, v, &TO(c)->csv_path);
}
static int on_json(bench_opt_ctx *c, const char *v)
{
    return bench_opt_file(c, v, &TO(c)->json_path);
}
#define INT(name, field, lo, hi)                           \
    static int on_##name(bench_opt_ctx *c, const char *v)  \
    {                                                      \
        return bench_opt_int(c, v, lo, hi, &TO(c)->field); \
    }
INT(input, input, 1, 1 << 24)
INT(image, image, 1, 4096)
INT(classes, classes, 2, 1 << 20)
INT(global_batch, global_batch, 1, 1 << 24)
INT(steps, steps, 1, 1000000)
INT(warmup, warmup, 0, 1000000)
INT(compute_steps, compute_steps, 0, 1000000)
INT(check_every, check_every, 0, 1000000)
INT(blas_threads, blas_threads, 1, 256)
INT(inject_nan, inject_nan, 1, 1 << 30)
#undef INT
static int on_seed(bench_opt_ctx *c, const char *v) { return bench_opt_u64(c, v, &TO(c)->seed); }
static int on_quick(bench_opt_ctx *c, const char *v)
{
    (void)v;
    TO(c)->quick = 1;
    return 0;
}

/* The flags and the help text (train_options_usage): written once, here. */
static const bench_opt opt_table[] = {
    {0, NULL, NULL, NULL, "model:"},
    {0, "model", "mlp|cnn", on_model, "(mlp)"},
    {0, "hidden", "N,N,...", on_hidden, "hidden widths (mlp 2048,2048; cnn: linear layers, 512)"},
    {0, "input", "N", on_input, "mlp input features (1024)"},
    {0, "channels", "N,N,...", on_channels, "cnn conv+ReLU+pool stages (32,64,128)"},
    {0, "image", "N", on_image, "cnn image side, 3 channels (32)"},
    {0, "classes", "N", on_classes, "(10)"},
    {0, NULL, NULL, NULL, "training:"},
    {0, "mode", "LIST", on_mode,
     "single,allreduce-sync,ddp,ps,local-sgd[:K]\n"
     "(single,allreduce-sync,ddp,ps); single runs at 1 process,\n"
     "the others at every other count of -P"},
    {0, "batch-sizes", "LIST", on_batch_sizes, "samples per rank per step (32,64,128)"},
    {0, "batch", "LIST", on_batch_sizes, NULL},
    {0, "global-batch", "N", on_global_batch, "split N samples over the ranks instead"},
    {0, "bucket-mb", "LIST", on_bucket_mb, "ddp bucket sizes, MiB (25)"},
    {0, "first-bucket-mb", "X", on_first_bucket_mb, "the first ddp bucket, MiB (1)"},
    {0, "compress", "LIST", on_compress, "ddp: none|fp16|bf16|topk:RATIO (none)"},
    {0, "steps", "N", on_steps, "timed steps (20)"},
    {0, "warmup", "N", on_warmup, "untimed steps before them (3)"},
    {0, "compute-steps", "N", on_compute_steps,
     "forward+backward passes alone between the timed steps,\n"
     "for the compute time (10)"},
    {0, "lr", "X", on_lr, "SGD learning rate (0.01)"},
    {0, "momentum", "X", on_momentum, "SGD momentum, in [0,1) (0.9)"},
    {0, "seed", "N", on_seed, "data, teacher and weights (1)"},
    {0, "check-every", "K", on_check_every, "parameter hash across ranks every K steps (10)"},
    {0, "blas-threads", "N", on_blas_threads, "OpenBLAS threads per rank (1)"},
    {0, "inject-nan", "STEP", on_inject_nan, "testing: rank 0's input gets a NaN at STEP"},
    {0, NULL, NULL, NULL, "run:"},
    {'P', "procs", "LIST", on_procs, "process counts (1,2,4)"},
    {0, "backend", "LIST", on_backend, "backends (default: auto if available, else tcp)"},
    {'T', "timeout", "SECONDS", on_timeout, "give up on a blocked wait (300)"},
    {0, "csv", "FILE", on_csv, "append training rows"},
    {'J', "json", "FILE", on_json, "merge into results.training / results.memory"},
    {0, "quick", NULL, on_quick, "1,2 processes, batch 32, 10 steps (a few seconds)"},
    {'h', "help", NULL, bench_opt_help, "this help"},
    {0, NULL, NULL, NULL,
     "multi-host (the same command on each host; -P is then the ranks of this host):"},
};
#define N_OPTS BENCH_OPT_COUNT(opt_table)

void train_options_usage(FILE *f)
{
    fprintf(f, "usage: collbench train [options]\n"
               "Data-parallel training on synthetic data: step time, compute vs exposed\n"
               "communication, samples/s, scaling efficiency and memory, per mode.\n\n");
    bench_opt_usage(f, opt_table, N_OPTS, 25);
    bench_multinode_usage(f, 25);
    fprintf(f,
            "exit codes: 0 ok, 1 parameters differ across ranks, 2 bad usage, 3 runtime failure\n"
            "(a NaN/Inf loss names the step), 4 backend or OpenBLAS unavailable\n");
}

int train_options_has_flag(const char *flag)
{
    return bench_opt_find(opt_table, N_OPTS, flag) != NULL;
}

static int parse_pass(train_options *o, int quick, int argc, char **argv, char *err, size_t errlen)
{
    defaults(o, quick);
    bench_opt_ctx c = {
        .table = opt_table, .n = N_OPTS, .user = o, .err = err, .errlen = errlen, .mn = &o->mn};
    return bench_opt_parse(&c, argc, argv);
}

int train_options_parse(train_options *o, int argc, char **argv, char *err, size_t errlen)
{
    /* --quick changes defaults the other flags override: parse again on its defaults */
    int rc = parse_pass(o, 0, argc, argv, err, errlen);
    if (rc == 0 && o->quick) rc = parse_pass(o, 1, argc, argv, err, errlen);
    if (rc) return rc == BENCH_OPT_HELP ? TRAIN_OPTIONS_HELP : rc;
    if (bench_multinode_finish(&o->mn, TRAIN_MAX_PROCS, err, errlen)) return COLL_EINVAL;
    if (o->mn.nnodes) { /* -P means the ranks of this host */
        o->procs[0] = o->mn.nproc_per_node;
        o->nprocs = 1;
    }
    return 0;
}

void train_options_spec(const train_options *o, net_spec *s)
{
    memset(s, 0, sizeof *s);
    s->kind = o->kind;
    s->input = o->input;
    s->in_channels = o->in_channels;
    s->image = o->image;
    s->hidden = o->hidden;
    s->nhidden = o->nhidden;
    s->channels = o->channels;
    s->nchannels = o->kind == NET_CNN ? o->nchannels : 0;
    s->classes = o->classes;
}

static size_t join(char *buf, size_t len, const int *v, size_t n)
{
    size_t used = 0;
    for (size_t i = 0; i < n && used < len; i++)
        used += (size_t)snprintf(buf + used, len - used, "%s%d", i ? "x" : "", v[i]);
    return used < len ? used : len;
}

void train_options_model_name(const train_options *o, char *buf, size_t len)
{
    size_t used = (size_t)snprintf(buf, len, "%s-", o->kind == NET_MLP ? "mlp" : "cnn");
    if (used >= len) return;
    if (o->kind == NET_CNN) {
        used += join(buf + used, len - used, o->channels, o->nchannels);
        if (used + 1 < len) buf[used++] = '-', buf[used] = '\0';
    }
    join(buf + used, len - used, o->hidden, o->nhidden);
}

int train_options_batch(const train_options *o, size_t i, int nprocs)
{
    return o->global_batch ? o->global_batch / nprocs : o->batches[i];
}

int train_options_check(const train_options *o, char *err, size_t errlen)
{
    net_spec spec;
    train_layer layers[NET_MAX_LAYERS];
    size_t nl, np;
    train_options_spec(o, &spec);
    int rc = train_net_plan(&spec, layers, &nl, &np, err, errlen);
    if (rc) return rc;
    if (np > (size_t)1 << 31) {
        coll__set_err(err, errlen, "the model has %zu parameters; at most 2^31 are supported", np);
        return COLL_EINVAL;
    }
    int maxp = 1;
    for (size_t i = 0; i < o->nprocs; i++) {
        maxp = o->procs[i] > maxp ? o->procs[i] : maxp;
        if (o->global_batch && (o->global_batch < o->procs[i] || o->global_batch % o->procs[i])) {
            coll__set_err(err, errlen,
                          "--global-batch %d cannot be split evenly over %d processes "
                          "(-P): it needs a multiple of %d, at least one sample per rank",
                          o->global_batch, o->procs[i], o->procs[i]);
            return COLL_EINVAL;
        }
    }
    if (o->inject_nan > o->warmup + o->steps) {
        coll__set_err(err, errlen, "--inject-nan %d is after the last step (%d)", o->inject_nan,
                      o->warmup + o->steps);
        return COLL_EINVAL;
    }
    /* The largest configuration: biggest batch, every mode's buffers at rank 0. */
    size_t batch = 0;
    for (size_t i = 0; i < (o->global_batch ? 1 : o->nbatches); i++) {
        size_t b = (size_t)train_options_batch(o, i, 1);
        batch = b > batch ? b : batch;
    }
    size_t comm = 0;
    for (size_t m = 0; m < o->nmodes; m++)
        for (size_t c = 0; c < o->ncompress; c++)
            for (size_t b = 0; b < o->nbucket; b++) {
                reducer_opts r = o->modes[m];
                r.compress = o->compress[c];
                r.bucket_bytes = (size_t)(o->bucket_mb[b] * 1048576.0);
                size_t e = train_reducer_comm_bytes_estimate(&r, np, maxp, 0);
                comm = e > comm ? e : comm;
            }
    train_mem est = {.params_bytes = np * 4,
                     .grads_bytes = np * 4,
                     .optim_bytes = np * 4,
                     .activations_bytes = train_net_activation_bytes(layers, nl, batch),
                     .comm_buffers_bytes = comm};
    double per_rank = (double)train_mem_total(&est), avail = (double)train_mem_available_bytes();
    if (avail > 0 && per_rank * maxp > 0.8 * avail) {
        coll__set_err(
            err, errlen,
            "the model is too large for this machine's memory: about %.0f MiB "
            "per rank (%zu parameters: %.0f MiB each for weights, gradients, optimizer; "
            "%.0f MiB activations at batch %zu; %.0f MiB communication buffers) x %d ranks "
            "= %.0f MiB, more than 80%% of the %.0f MiB available (%.0f MiB: the rest stays "
            "for the system and the page cache)",
            per_rank / 1048576, np, np * 4.0 / 1048576, est.activations_bytes / 1048576.0, batch,
            comm / 1048576.0, maxp, per_rank * maxp / 1048576, avail / 1048576,
            0.8 * avail / 1048576);
        return COLL_EINVAL;
    }
    return 0;
}
