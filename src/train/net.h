/* A model: a stack of layers over one flat parameter buffer and one flat
 * gradient buffer (layer after layer, weights then bias), plus the scratch a
 * batch needs. Builders for the MLP and the CNN of `collbench train`. */
#ifndef TRAIN_NET_H
#define TRAIN_NET_H

#include <stddef.h>
#include <stdint.h>

#include "train/layer.h"

typedef enum net_kind { NET_MLP, NET_CNN } net_kind;

typedef struct net_spec {
    net_kind kind;
    int input;         /* mlp: input features */
    int in_channels;   /* cnn: image channels */
    int image;         /* cnn: image height = width */
    const int *hidden; /* mlp: hidden layer widths; cnn: the linear layers after the convs */
    size_t nhidden;
    const int *channels; /* cnn: output channels of each conv + ReLU + pool stage */
    size_t nchannels;
    int classes;
} net_spec;

typedef struct train_net {
    train_layer *layers;
    size_t nlayers;
    size_t nparams;
    float *params, *grads;
    struct coll_comm *grads_comm; /* grads came from coll_alloc on it (NULL: aligned_alloc) */
    size_t batch, in_size, classes;
    float *dbuf[2]; /* gradients of activations, ping-pong */
    float *dlogits;
} train_net;

#define NET_MAX_LAYERS 256

/* Checks the spec (sizes >= 1, the image divisible by 2 per conv stage) and
 * lays the layers out without allocating: layers must hold NET_MAX_LAYERS. */
int train_net_plan(const net_spec *spec, train_layer *layers, size_t *nlayers, size_t *nparams,
                   char *err, size_t errlen);
/* Bytes of activations and their gradients for a batch (what the model allocates
 * besides parameters and gradients). */
size_t train_net_activation_bytes(const train_layer *layers, size_t nlayers, size_t batch);

/* Allocates and initialises the parameters from seed (same on every rank). */
/* Moves the gradients into comm's memory (coll_alloc: shm reads it without
 * copies, as DDP's buckets live in memory registered with the backend).
 * Keeps the private array when the backend has none to give. */
void train_net_grads_to_comm(train_net *m, struct coll_comm *comm);

int train_net_build(const net_spec *spec, size_t batch, uint64_t seed, train_net *m, char *err,
                    size_t errlen);
void train_net_free(train_net *m);

/* Forward pass and loss; the gradient of the logits is kept for backward. */
double train_net_forward(train_net *m, const float *x, const int *labels);
/* Backward pass: every parameter gradient into m->grads; hook may be NULL. */
void train_net_backward(train_net *m, const float *x, const grad_hook *hook);

#endif
