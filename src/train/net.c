#include "train/net.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "coll.h"
#include "core/errbuf.h"
#include "train/train_rng.h"

static int add(train_layer *layers, size_t *n, size_t *nparams, char *err, size_t errlen)
{
    if (*n >= NET_MAX_LAYERS) {
        coll__set_err(err, errlen, "more than %d layers", NET_MAX_LAYERS / 3);
        return COLL_EINVAL;
    }
    layers[*n].param_off = *nparams;
    *nparams += layers[*n].nweight + layers[*n].nbias;
    (*n)++;
    return 0;
}

static int check_sizes(const char *flag, const int *v, size_t n, char *err, size_t errlen)
{
    for (size_t i = 0; i < n; i++)
        if (v[i] < 1) {
            coll__set_err(err, errlen, "%s: layer size %d must be at least 1", flag, v[i]);
            return COLL_EINVAL;
        }
    return 0;
}

int train_net_plan(const net_spec *s, train_layer *layers, size_t *nlayers, size_t *nparams,
                   char *err, size_t errlen)
{
    size_t n = 0, np = 0;
    int rc;
    *nlayers = *nparams = 0;
    if (s->classes < 2) {
        coll__set_err(err, errlen, "--classes: %d must be at least 2", s->classes);
        return COLL_EINVAL;
    }
    if ((rc = check_sizes("--hidden", s->hidden, s->nhidden, err, errlen))) return rc;
    int features;
    if (s->kind == NET_MLP) {
        if (s->input < 1) {
            coll__set_err(err, errlen, "--input: %d features must be at least 1", s->input);
            return COLL_EINVAL;
        }
        features = s->input;
    } else {
        if ((rc = check_sizes("--channels", s->channels, s->nchannels, err, errlen))) return rc;
        if (s->in_channels < 1 || s->image < 1) {
            coll__set_err(err, errlen, "--image: %dx%d images with %d channels are empty", s->image,
                          s->image, s->in_channels);
            return COLL_EINVAL;
        }
        if (s->nchannels > 20 || s->image % (1 << s->nchannels) != 0) {
            coll__set_err(err, errlen,
                          "--image %d cannot be halved by %zu pooling stages "
                          "(--channels); use a multiple of %d",
                          s->image, s->nchannels, s->nchannels > 20 ? 0 : 1 << s->nchannels);
            return COLL_EINVAL;
        }
        int c = s->in_channels, hw = s->image;
        for (size_t i = 0; i < s->nchannels; i++) {
            train_layer_init_conv(&layers[n], c, hw, hw, s->channels[i]);
            if ((rc = add(layers, &n, &np, err, errlen))) return rc;
            c = s->channels[i];
            train_layer_init_relu(&layers[n], c, hw, hw);
            if ((rc = add(layers, &n, &np, err, errlen))) return rc;
            train_layer_init_maxpool(&layers[n], c, hw, hw);
            if ((rc = add(layers, &n, &np, err, errlen))) return rc;
            hw /= 2;
        }
        features = c * hw * hw;
    }
    for (size_t i = 0; i <= s->nhidden; i++) {
        int out = i < s->nhidden ? s->hidden[i] : s->classes;
        train_layer_init_linear(&layers[n], features, out);
        if ((rc = add(layers, &n, &np, err, errlen))) return rc;
        if (i == s->nhidden) break;
        train_layer_init_relu(&layers[n], out, 1, 1);
        if ((rc = add(layers, &n, &np, err, errlen))) return rc;
        features = out;
    }
    *nlayers = n;
    *nparams = np;
    return 0;
}

static size_t max_width(const train_layer *layers, size_t n)
{
    size_t w = layers[0].in_size;
    for (size_t i = 0; i < n; i++) w = layers[i].out_size > w ? layers[i].out_size : w;
    return w;
}

size_t train_net_activation_bytes(const train_layer *layers, size_t nlayers, size_t batch)
{
    size_t bytes = 0;
    for (size_t i = 0; i < nlayers; i++) bytes += train_layer_activation_bytes(&layers[i], batch);
    /* two activation-gradient buffers, the logits' gradient, the input batch and labels */
    bytes += (2 * max_width(layers, nlayers) + layers[nlayers - 1].out_size + layers[0].in_size) *
             batch * sizeof(float);
    return bytes + batch * sizeof(int);
}

/* He-uniform weights (variance 2/fan_in, for ReLU), zero biases. */
static void init_params(train_net *m, uint64_t seed)
{
    for (size_t i = 0; i < m->nlayers; i++) {
        train_layer *l = &m->layers[i];
        if (!l->nweight) continue;
        size_t fan_in = l->kind == LAYER_CONV ? (size_t)l->c_in * CONV_K * CONV_K : l->in_size;
        float a = (float)sqrt(6.0 / (double)fan_in);
        if (i == m->nlayers - 1) a *= 0.5f; /* a calmer start for the logits */
        uint64_t key = train_mix64(seed ^ (0x5eedull + i));
        float *w = m->params + l->param_off;
        for (size_t j = 0; j < l->nweight; j++) w[j] = a * train_uniform(key, j);
        memset(w + l->nweight, 0, l->nbias * sizeof(float));
    }
}

int train_net_build(const net_spec *spec, size_t batch, uint64_t seed, train_net *m, char *err,
                    size_t errlen)
{
    train_layer plan[NET_MAX_LAYERS];
    memset(m, 0, sizeof *m);
    int rc = train_net_plan(spec, plan, &m->nlayers, &m->nparams, err, errlen);
    if (rc) return rc;
    m->batch = batch;
    m->in_size = plan[0].in_size;
    m->classes = plan[m->nlayers - 1].out_size;
    m->layers = calloc(m->nlayers, sizeof *m->layers);
    m->params = aligned_alloc(64, ((m->nparams * sizeof(float)) + 63) / 64 * 64);
    m->grads = aligned_alloc(64, ((m->nparams * sizeof(float)) + 63) / 64 * 64);
    size_t width = max_width(plan, m->nlayers);
    m->dbuf[0] = malloc(batch * width * sizeof(float));
    m->dbuf[1] = malloc(batch * width * sizeof(float));
    m->dlogits = malloc(batch * m->classes * sizeof(float));
    int ok = m->layers && m->params && m->grads && m->dbuf[0] && m->dbuf[1] && m->dlogits;
    for (size_t i = 0; ok && i < m->nlayers; i++) {
        train_layer *l = &m->layers[i];
        *l = plan[i];
        ok = (l->out = malloc(batch * l->out_size * sizeof(float))) != NULL;
        if (ok && l->kind == LAYER_CONV)
            ok = (l->cols = malloc(batch * (size_t)l->c_in * CONV_K * CONV_K * l->h_in * l->w_in *
                                   sizeof(float))) != NULL;
        if (ok && l->kind == LAYER_MAXPOOL)
            ok = (l->argmax = malloc(batch * l->out_size * sizeof(int))) != NULL;
    }
    if (!ok) {
        train_net_free(m);
        coll__set_err(err, errlen, "out of memory allocating the model for batch %zu", batch);
        return COLL_ENOMEM;
    }
    memset(m->grads, 0, m->nparams * sizeof(float));
    init_params(m, seed);
    return 0;
}

void train_net_grads_to_comm(train_net *m, struct coll_comm *comm)
{
    float *g = coll_alloc(comm, m->nparams * sizeof(float));
    if (!g) return;
    memcpy(g, m->grads, m->nparams * sizeof(float));
    free(m->grads);
    m->grads = g;
    m->grads_comm = comm;
}

void train_net_free(train_net *m)
{
    for (size_t i = 0; m->layers && i < m->nlayers; i++) {
        free(m->layers[i].out);
        free(m->layers[i].cols);
        free(m->layers[i].argmax);
    }
    free(m->layers);
    free(m->params);
    if (m->grads_comm) coll_free(m->grads_comm, m->grads);
    else free(m->grads);
    free(m->dbuf[0]);
    free(m->dbuf[1]);
    free(m->dlogits);
    memset(m, 0, sizeof *m);
}

double train_net_forward(train_net *m, const float *x, const int *labels)
{
    const float *in = x;
    for (size_t i = 0; i < m->nlayers; i++) {
        train_layer_forward(&m->layers[i], m->params, in, m->batch);
        in = m->layers[i].out;
    }
    return train_softmax_xent(in, labels, m->batch, m->classes, m->dlogits);
}

void train_net_backward(train_net *m, const float *x, const grad_hook *hook)
{
    const float *dy = m->dlogits;
    int which = 0;
    for (size_t i = m->nlayers; i-- > 0;) {
        const float *in = i == 0 ? x : m->layers[i - 1].out;
        float *dx = i == 0 ? NULL : m->dbuf[which];
        train_layer_backward(&m->layers[i], m->params, m->grads, in, dy, dx, m->batch, hook);
        dy = dx;
        which ^= 1;
    }
}
