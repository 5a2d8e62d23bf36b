#include "train/train_options.h"

#include <stdlib.h>
#include <string.h>

#include "bench/flag_split.h"
#include "coll.h"
#include "core/errbuf.h"
#include "train/train_memory.h"

void train_options_usage(FILE *f)
{
    fprintf(f,
        "usage: collbench train [options]\n"
        "Data-parallel training on synthetic data: step time, compute vs exposed\n"
        "communication, samples/s, scaling efficiency and memory, per mode.\n\n"
        "model:\n"
        "      --model mlp|cnn       (mlp)\n"
        "      --hidden LIST         hidden widths (mlp 2048,2048; cnn: linear layers, 512)\n"
        "      --input N             mlp input features (1024)\n"
        "      --channels LIST       cnn conv+ReLU+pool stages (32,64,128)\n"
        "      --image N             cnn image side, 3 channels (32)\n"
        "      --classes N           (10)\n"
        "training:\n"
        "      --mode LIST           single,allreduce-sync,ddp,ps,local-sgd[:K]\n"
        "                            (single,allreduce-sync,ddp,ps); single runs at 1 process,\n"
        "                            the others at every other count of -P\n"
        "      --batch-sizes LIST    samples per rank per step (32,64,128)\n"
        "      --global-batch N      split N samples over the ranks instead\n"
        "      --bucket-mb LIST      ddp bucket sizes, MiB (25); first bucket --first-bucket-mb (1)\n"
        "      --compress LIST       ddp: none|fp16|bf16|topk:RATIO (none)\n"
        "      --steps N             timed steps (20), after --warmup N (3)\n"
        "      --compute-steps N     forward+backward passes alone between the timed steps,\n"
        "                            for the compute time (10)\n"
        "      --lr X --momentum X   SGD (0.01, 0.9)\n"
        "      --seed N              data, teacher and weights (1)\n"
        "      --check-every K       parameter hash across ranks every K steps (10)\n"
        "      --blas-threads N      OpenBLAS threads per rank (1)\n"
        "      --inject-nan STEP     testing: rank 0's input gets a NaN at STEP\n"
        "run:\n"
        "  -P, --procs LIST          process counts (1,2,4)\n"
        "      --backend LIST        backends (default: auto if available, else tcp)\n"
        "  -T, --timeout SECONDS     give up on a blocked wait (300)\n"
        "      --csv FILE            append training rows\n"
        "  -J, --json FILE           merge into results.training / results.memory\n"
        "      --quick               1,2 processes, batch 32, 10 steps (a few seconds)\n"
        "  -h, --help\n"
        "multi-host (the same command on each host; -P is then the ranks of this host):\n");
    bench_multinode_usage(f, 25);
    fprintf(f,
        "exit codes: 0 ok, 1 parameters differ across ranks, 2 bad usage, 3 runtime failure\n"
        "(a NaN/Inf loss names the step), 4 backend or OpenBLAS unavailable\n");
}

static void defaults(train_options *o, int quick)
{
    memset(o, 0, sizeof *o);
    o->kind = MODEL_MLP;
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
    if (strlen(v) >= sizeof copy) return coll_set_err(err, errlen, "%s: list too long", flag), COLL_EINVAL;
    strcpy(copy, v);
    *n = 0;
    char *p = copy;
    for (;;) {
        char *c = strchr(p, ',');
        if (c) *c = '\0';
        if (!*p) return coll_set_err(err, errlen, "%s: empty item in '%s'", flag, v), COLL_EINVAL;
        if (*n == TRAIN_MAX_LIST)
            return coll_set_err(err, errlen, "%s: more than %d items", flag, TRAIN_MAX_LIST), COLL_EINVAL;
        int rc = one(flag, p, dst, *n, err, errlen);
        if (rc) return rc;
        (*n)++;
        if (!c) return 0;
        p = c + 1;
    }
}

static int long_in(const char *flag, const char *s, long lo, long hi, long *out, char *err,
                   size_t errlen)
{
    char *end;
    long x = strtol(s, &end, 10);
    if (!*s || *end || x < lo || x > hi) {
        coll_set_err(err, errlen, "%s: '%s' must be an integer from %ld to %ld", flag, s, lo, hi);
        return COLL_EINVAL;
    }
    *out = x;
    return 0;
}

static int one_size(const char *flag, const char *s, void *dst, size_t i, char *err, size_t errlen)
{
    long x;
    int rc = long_in(flag, s, 1, 1 << 20, &x, err, errlen);
    if (rc && strtol(s, NULL, 10) == 0)
        coll_set_err(err, errlen, "%s: size '%s' must be at least 1", flag, s);
    if (!rc) ((int *)dst)[i] = (int)x;
    return rc;
}

static int one_proc(const char *flag, const char *s, void *dst, size_t i, char *err, size_t errlen)
{
    long x;
    int rc = long_in(flag, s, 1, TRAIN_MAX_PROCS, &x, err, errlen);
    if (!rc) ((int *)dst)[i] = (int)x;
    return rc;
}

static int one_mode(const char *flag, const char *s, void *dst, size_t i, char *err, size_t errlen)
{
    (void)flag;
    return reducer_mode_parse(s, &((reducer_opts *)dst)[i], err, errlen);
}

static int one_compress(const char *flag, const char *s, void *dst, size_t i, char *err,
                        size_t errlen)
{
    (void)flag;
    return compress_parse(s, &((compress_spec *)dst)[i], err, errlen);
}

static int positive_double(const char *flag, const char *s, double *out, char *err, size_t errlen)
{
    char *end;
    double x = strtod(s, &end);
    if (!*s || *end || !(x > 0 && x < 1e6)) {
        coll_set_err(err, errlen, "%s: '%s' must be a number more than 0", flag, s);
        return COLL_EINVAL;
    }
    *out = x;
    return 0;
}

static int one_bucket(const char *flag, const char *s, void *dst, size_t i, char *err, size_t errlen)
{
    return positive_double(flag, s, &((double *)dst)[i], err, errlen);
}

static int one_backend(const char *flag, const char *s, void *dst, size_t i, char *err, size_t errlen)
{
    int known = 0;
    for (const char *const *b = coll_backend_names(); *b; b++) known |= strcmp(*b, s) == 0;
    if (!known || i >= 8) {
        coll_set_err(err, errlen, "%s: '%s' is not a backend (tcp, shm, auto, mpi, nccl)", flag, s);
        return COLL_EINVAL;
    }
    snprintf(((char(*)[16])dst)[i], 16, "%s", s);
    return 0;
}

static int is(const char *flag, const char *a, const char *b) { return strcmp(flag, a) == 0 || (b && strcmp(flag, b) == 0); }

static int parse_flag(train_options *o, const char *f, const char *v, char *err, size_t errlen)
{
    long x;
    int rc;
    if (is(f, "--model", NULL)) {
        if (strcmp(v, "mlp") == 0) o->kind = MODEL_MLP;
        else if (strcmp(v, "cnn") == 0) {
            o->kind = MODEL_CNN;
            if (!o->nhidden || o->hidden[0] == 2048) o->hidden[0] = 512, o->nhidden = 1;
        } else return coll_set_err(err, errlen, "--model: '%s' is not mlp or cnn", v), COLL_EINVAL;
        return 0;
    }
    if (is(f, "--hidden", NULL)) return each_item(f, v, &o->nhidden, one_size, o->hidden, err, errlen);
    if (is(f, "--channels", NULL)) return each_item(f, v, &o->nchannels, one_size, o->channels, err, errlen);
    if (is(f, "--mode", NULL)) return each_item(f, v, &o->nmodes, one_mode, o->modes, err, errlen);
    if (is(f, "--batch-sizes", "--batch")) return each_item(f, v, &o->nbatches, one_size, o->batches, err, errlen);
    if (is(f, "--bucket-mb", NULL)) return each_item(f, v, &o->nbucket, one_bucket, o->bucket_mb, err, errlen);
    if (is(f, "--compress", NULL)) return each_item(f, v, &o->ncompress, one_compress, o->compress, err, errlen);
    if (is(f, "-P", "--procs")) return each_item("-P", v, &o->nprocs, one_proc, o->procs, err, errlen);
    if (is(f, "--backend", NULL)) return each_item(f, v, &o->nbackends, one_backend, o->backends, err, errlen);
    if (is(f, "--first-bucket-mb", NULL)) return positive_double(f, v, &o->first_bucket_mb, err, errlen);
    if (is(f, "--lr", NULL)) return positive_double(f, v, &o->lr, err, errlen);
    if (is(f, "-T", "--timeout")) return positive_double(f, v, &o->timeout_s, err, errlen);
    if (is(f, "--momentum", NULL)) {
        char *end;
        o->momentum = strtod(v, &end);
        if (!*v || *end || !(o->momentum >= 0 && o->momentum < 1))
            return coll_set_err(err, errlen, "--momentum: '%s' must be in [0,1)", v), COLL_EINVAL;
        return 0;
    }
    if (is(f, "--csv", NULL) || is(f, "-J", "--json")) {
        if (!*v) return coll_set_err(err, errlen, "%s: empty file name", f), COLL_EINVAL;
        if (is(f, "--csv", NULL)) o->csv_path = v;
        else o->json_path = v;
        return 0;
    }
    struct { const char *name; long lo, hi; int *dst; } ints[] = {
        {"--input", 1, 1 << 24, &o->input},     {"--image", 1, 4096, &o->image},
        {"--classes", 2, 1 << 20, &o->classes}, {"--global-batch", 1, 1 << 24, &o->global_batch},
        {"--steps", 1, 1000000, &o->steps},     {"--warmup", 0, 1000000, &o->warmup},
        {"--compute-steps", 0, 1000000, &o->compute_steps},
        {"--check-every", 0, 1000000, &o->check_every},
        {"--blas-threads", 1, 256, &o->blas_threads},
        {"--inject-nan", 1, 1 << 30, &o->inject_nan},
    };
    for (size_t i = 0; i < sizeof ints / sizeof ints[0]; i++)
        if (is(f, ints[i].name, NULL)) {
            if ((rc = long_in(f, v, ints[i].lo, ints[i].hi, &x, err, errlen))) return rc;
            *ints[i].dst = (int)x;
            return 0;
        }
    if (is(f, "--seed", NULL)) {
        char *end;
        unsigned long long s = strtoull(v, &end, 10);
        if (!*v || *end) return coll_set_err(err, errlen, "--seed: '%s' is not an integer", v), COLL_EINVAL;
        o->seed = s;
        return 0;
    }
    coll_set_err(err, errlen, "%s: unknown flag (see --help)", f);
    return COLL_EINVAL;
}

int train_options_parse(train_options *o, int argc, char **argv, char *err, size_t errlen)
{
    int quick = 0;
    for (int i = 1; i < argc; i++) quick |= strcmp(argv[i], "--quick") == 0;
    defaults(o, quick);
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (is(a, "-h", "--help")) return TRAIN_OPTIONS_HELP;
        if (is(a, "--quick", NULL)) continue;
        if (a[0] != '-') return coll_set_err(err, errlen, "unexpected argument '%s'", a), COLL_EINVAL;
        char flag[32];
        const char *v;
        if (bench_flag_split(argc, argv, &i, flag, sizeof flag, &v, err, errlen) != 0) return COLL_EINVAL;
        int mr = bench_multinode_flag(&o->mn, flag, v, err, errlen);
        if (mr < 0) return COLL_EINVAL;
        int rc = mr ? 0 : parse_flag(o, flag, v, err, errlen);
        if (rc) return rc;
    }
    if (bench_multinode_finish(&o->mn, TRAIN_MAX_PROCS, err, errlen)) return COLL_EINVAL;
    if (o->mn.nnodes) { /* -P means the ranks of this host */
        o->procs[0] = o->mn.nproc_per_node;
        o->nprocs = 1;
    }
    return 0;
}

void train_options_spec(const train_options *o, model_spec *s)
{
    memset(s, 0, sizeof *s);
    s->kind = o->kind;
    s->input = o->input;
    s->in_channels = o->in_channels;
    s->image = o->image;
    s->hidden = o->hidden;
    s->nhidden = o->nhidden;
    s->channels = o->channels;
    s->nchannels = o->kind == MODEL_CNN ? o->nchannels : 0;
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
    size_t used = (size_t)snprintf(buf, len, "%s-", o->kind == MODEL_MLP ? "mlp" : "cnn");
    if (used >= len) return;
    if (o->kind == MODEL_CNN) {
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
    model_spec spec;
    train_layer layers[MODEL_MAX_LAYERS];
    size_t nl, np;
    train_options_spec(o, &spec);
    int rc = model_plan(&spec, layers, &nl, &np, err, errlen);
    if (rc) return rc;
    if (np > (size_t)1 << 31) {
        coll_set_err(err, errlen, "the model has %zu parameters; at most 2^31 are supported", np);
        return COLL_EINVAL;
    }
    int maxp = 1;
    for (size_t i = 0; i < o->nprocs; i++) {
        maxp = o->procs[i] > maxp ? o->procs[i] : maxp;
        if (o->global_batch && (o->global_batch < o->procs[i] || o->global_batch % o->procs[i])) {
            coll_set_err(err, errlen, "--global-batch %d cannot be split evenly over %d processes "
                         "(-P): it needs a multiple of %d, at least one sample per rank",
                         o->global_batch, o->procs[i], o->procs[i]);
            return COLL_EINVAL;
        }
    }
    if (o->inject_nan > o->warmup + o->steps) {
        coll_set_err(err, errlen, "--inject-nan %d is after the last step (%d)", o->inject_nan,
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
                size_t e = reducer_comm_bytes_estimate(&r, np, maxp, 0);
                comm = e > comm ? e : comm;
            }
    train_mem est = {.params_bytes = np * 4, .grads_bytes = np * 4, .optim_bytes = np * 4,
                     .activations_bytes = model_activation_bytes(layers, nl, batch),
                     .comm_buffers_bytes = comm};
    double per_rank = (double)train_mem_total(&est), avail = (double)train_mem_available_bytes();
    if (avail > 0 && per_rank * maxp > 0.8 * avail) {
        coll_set_err(err, errlen, "the model is too large for this machine's memory: about %.0f MiB "
                     "per rank (%zu parameters: %.0f MiB each for weights, gradients, optimizer; "
                     "%.0f MiB activations at batch %zu; %.0f MiB communication buffers) x %d ranks "
                     "= %.0f MiB, but only %.0f MiB are available",
                     per_rank / 1048576, np, np * 4.0 / 1048576, est.activations_bytes / 1048576.0,
                     batch, comm / 1048576.0, maxp, per_rank * maxp / 1048576, avail / 1048576);
        return COLL_EINVAL;
    }
    return 0;
}
