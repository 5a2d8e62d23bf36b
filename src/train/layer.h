/* The layers of the training benchmark. Every layer works on a batch of B
 * samples laid out sample after sample; its parameters live in the model's one
 * flat parameter buffer (weights, then bias) and its gradients at the same
 * offsets of the flat gradient buffer, so a reducer can treat gradients as
 * ranges of one array.
 *
 * Backward produces gradients from high offsets to low ones (bias first, then
 * weight rows from the last down), and tells the hook each time a lower part
 * is final: that is what lets DDP start a bucket's all-reduce while the rest
 * of backward still computes. */
#ifndef TRAIN_LAYER_H
#define TRAIN_LAYER_H

#include <stddef.h>

/* Told by backward how far final gradients reach. Both callbacks take offsets
 * into the flat gradient buffer. */
typedef struct grad_hook {
    /* every gradient at offset >= lo (up to the end) is final */
    void (*ready)(void *arg, size_t lo);
    /* the highest bucket boundary strictly below hi (0 if none): backward cuts
     * its weight-gradient products there so each bucket can start early */
    size_t (*boundary_below)(void *arg, size_t hi);
    void *arg;
} grad_hook;

typedef enum layer_kind { LAYER_LINEAR, LAYER_CONV, LAYER_RELU, LAYER_MAXPOOL } layer_kind;

typedef struct train_layer {
    layer_kind kind;
    /* shape of one sample: channels x height x width (linear: c = features, h = w = 1) */
    int c_in, h_in, w_in, c_out, h_out, w_out;
    size_t in_size, out_size; /* elements per sample */
    size_t param_off;         /* weights at param_off, bias right after */
    size_t nweight, nbias;
    float *out;  /* B x out_size: forward output */
    float *cols; /* conv: im2col of every sample, B x (c_in*9) x (h*w) */
    int *argmax; /* maxpool: input index of each output */
} train_layer;

/* Conv kernels are 3x3, stride 1, padding 1 (shape-preserving); pools 2x2, stride 2. */
#define CONV_K 3

/* Shapes and parameter counts; buffers are allocated by the model. */
void train_layer_init_linear(train_layer *l, int in, int out);
void train_layer_init_conv(train_layer *l, int c_in, int h, int w, int c_out);
void train_layer_init_relu(train_layer *l, int c, int h, int w);
void train_layer_init_maxpool(train_layer *l, int c, int h, int w);

/* Activation scratch of the layer for a batch (out, cols, argmax), bytes. */
size_t train_layer_activation_bytes(const train_layer *l, size_t batch);

/* y = layer(x) into l->out. params is the model's flat buffer. */
void train_layer_forward(train_layer *l, const float *params, const float *x, size_t batch);
/* From dy (B x out_size): gradients of the layer's parameters into grads (at
 * param_off, overwritten), and dx (B x in_size) unless dx is NULL. hook may be NULL. */
void train_layer_backward(train_layer *l, const float *params, float *grads, const float *x,
                          const float *dy, float *dx, size_t batch, const grad_hook *hook);

/* Per-kind implementations (layer_linear.c, layer_conv.c, layer_relu.c, layer_pool.c). */
void train_linear_forward(train_layer *l, const float *params, const float *x, size_t batch);
void train_linear_backward(train_layer *l, const float *params, float *grads, const float *x,
                           const float *dy, float *dx, size_t batch, const grad_hook *hook);
void train_conv_forward(train_layer *l, const float *params, const float *x, size_t batch);
void train_conv_backward(train_layer *l, const float *params, float *grads, const float *dy,
                         float *dx, size_t batch, const grad_hook *hook);
void train_relu_forward(train_layer *l, const float *x, size_t batch);
void train_relu_backward(const train_layer *l, const float *dy, float *dx, size_t batch);
void train_maxpool_forward(train_layer *l, const float *x, size_t batch);
void train_maxpool_backward(const train_layer *l, const float *dy, float *dx, size_t batch);

/* Softmax cross-entropy of logits (B x classes) against labels, averaged over
 * the batch; dlogits (may be NULL) gets its gradient. */
double train_softmax_xent(const float *logits, const int *labels, size_t batch, size_t classes,
                          float *dlogits);

#endif
