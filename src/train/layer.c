/* Shapes of every layer kind and the dispatch to their implementations. */
#include "train/layer.h"

#include <string.h>

static void shape(train_layer *l, layer_kind kind, int c_in, int h_in, int w_in, int c_out,
                  int h_out, int w_out)
{
    memset(l, 0, sizeof *l);
    l->kind = kind;
    l->c_in = c_in, l->h_in = h_in, l->w_in = w_in;
    l->c_out = c_out, l->h_out = h_out, l->w_out = w_out;
    l->in_size = (size_t)c_in * h_in * w_in;
    l->out_size = (size_t)c_out * h_out * w_out;
}

void train_layer_init_linear(train_layer *l, int in, int out)
{
    shape(l, LAYER_LINEAR, in, 1, 1, out, 1, 1);
    l->nweight = (size_t)in * out;
    l->nbias = (size_t)out;
}

void train_layer_init_conv(train_layer *l, int c_in, int h, int w, int c_out)
{
    shape(l, LAYER_CONV, c_in, h, w, c_out, h, w);
    l->nweight = (size_t)c_out * c_in * CONV_K * CONV_K;
    l->nbias = (size_t)c_out;
}

void train_layer_init_relu(train_layer *l, int c, int h, int w)
{
    shape(l, LAYER_RELU, c, h, w, c, h, w);
}

void train_layer_init_maxpool(train_layer *l, int c, int h, int w)
{
    shape(l, LAYER_MAXPOOL, c, h, w, c, h / 2, w / 2);
}

size_t train_layer_activation_bytes(const train_layer *l, size_t batch)
{
    size_t bytes = batch * l->out_size * sizeof(float);
    if (l->kind == LAYER_CONV)
        bytes += batch * (size_t)l->c_in * CONV_K * CONV_K * l->h_in * l->w_in * sizeof(float);
    if (l->kind == LAYER_MAXPOOL) bytes += batch * l->out_size * sizeof(int);
    return bytes;
}

void train_layer_forward(train_layer *l, const float *params, const float *x, size_t batch)
{
    switch (l->kind) {
    case LAYER_LINEAR: train_linear_forward(l, params, x, batch); break;
    case LAYER_CONV: train_conv_forward(l, params, x, batch); break;
    case LAYER_RELU: train_relu_forward(l, x, batch); break;
    case LAYER_MAXPOOL: train_maxpool_forward(l, x, batch); break;
    }
}

void train_layer_backward(train_layer *l, const float *params, float *grads, const float *x,
                          const float *dy, float *dx, size_t batch, const grad_hook *hook)
{
    switch (l->kind) {
    case LAYER_LINEAR: train_linear_backward(l, params, grads, x, dy, dx, batch, hook); break;
    case LAYER_CONV: train_conv_backward(l, params, grads, dy, dx, batch, hook); break;
    case LAYER_RELU:
        if (dx) train_relu_backward(l, dy, dx, batch);
        break;
    case LAYER_MAXPOOL:
        if (dx) train_maxpool_backward(l, dy, dx, batch);
        break;
    }
}
