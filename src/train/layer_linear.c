/* Fully connected layer: y = x W^T + b, W is out x in (row-major). */
#include "train/layer.h"
#include "train/train_blas.h"

void train_linear_forward(train_layer *l, const float *params, const float *x, size_t batch)
{
    size_t in = l->in_size, out = l->out_size;
    const float *w = params + l->param_off, *b = w + l->nweight;
    for (size_t s = 0; s < batch; s++)
        for (size_t j = 0; j < out; j++) l->out[s * out + j] = b[j];
    train_sgemm(0, 1, batch, out, in, 1.0f, x, in, w, in, 1.0f, l->out, out);
}

void train_linear_backward(train_layer *l, const float *params, float *grads, const float *x,
                           const float *dy, float *dx, size_t batch, const grad_hook *hook)
{
    size_t in = l->in_size, out = l->out_size, base = l->param_off;
    float *gw = grads + base, *gb = gw + l->nweight;

    /* Bias first: it sits above the weights in the flat buffer. */
    for (size_t j = 0; j < out; j++) gb[j] = 0;
    for (size_t s = 0; s < batch; s++)
        for (size_t j = 0; j < out; j++) gb[j] += dy[s * out + j];
    if (hook) hook->ready(hook->arg, base + l->nweight);

    /* dW = dy^T x, in row blocks from the last row down, cut where a bucket
     * starts so its all-reduce can begin before the rows below are done. */
    size_t row_hi = out;
    while (row_hi > 0) {
        size_t row_lo = 0;
        if (hook) {
            size_t cut = hook->boundary_below(hook->arg, base + row_hi * in);
            if (cut > base) row_lo = (cut - base) / in; /* the row holding the boundary */
        }
        train_sgemm(1, 0, row_hi - row_lo, in, batch, 1.0f, dy + row_lo, out, x, in, 0.0f,
                    gw + row_lo * in, in);
        if (hook) hook->ready(hook->arg, base + row_lo * in);
        row_hi = row_lo;
    }

    /* dx = dy W */
    if (dx) train_sgemm(0, 0, batch, in, out, 1.0f, dy, out, params + base, in, 0.0f, dx, in);
}
