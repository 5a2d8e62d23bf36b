/* 3x3 convolution, stride 1, padding 1, through im2col: per sample the input
 * becomes a (c_in*9) x (h*w) matrix and the convolution one matrix product
 * with W (c_out x c_in*9). The columns are kept for backward. */
#include "train/layer.h"
#include "train/train_blas.h"

#include <string.h>

static void im2col(const float *x, int c, int h, int w, float *cols)
{
    for (int ci = 0; ci < c; ci++)
        for (int ky = 0; ky < CONV_K; ky++)
            for (int kx = 0; kx < CONV_K; kx++) {
                float *row = cols + ((size_t)(ci * CONV_K + ky) * CONV_K + kx) * h * w;
                for (int y = 0; y < h; y++) {
                    int sy = y + ky - 1;
                    for (int xx = 0; xx < w; xx++) {
                        int sx = xx + kx - 1;
                        row[y * w + xx] = sy < 0 || sy >= h || sx < 0 || sx >= w
                                              ? 0.0f
                                              : x[((size_t)ci * h + sy) * w + sx];
                    }
                }
            }
}

/* The adjoint of im2col: every column entry adds back into the pixel it came from. */
static void col2im(const float *cols, int c, int h, int w, float *dx)
{
    memset(dx, 0, sizeof(float) * (size_t)c * h * w);
    for (int ci = 0; ci < c; ci++)
        for (int ky = 0; ky < CONV_K; ky++)
            for (int kx = 0; kx < CONV_K; kx++) {
                const float *row = cols + ((size_t)(ci * CONV_K + ky) * CONV_K + kx) * h * w;
                for (int y = 0; y < h; y++) {
                    int sy = y + ky - 1;
                    if (sy < 0 || sy >= h) continue;
                    for (int xx = 0; xx < w; xx++) {
                        int sx = xx + kx - 1;
                        if (sx >= 0 && sx < w)
                            dx[((size_t)ci * h + sy) * w + sx] += row[y * w + xx];
                    }
                }
            }
}

static size_t kdim(const train_layer *l) { return (size_t)l->c_in * CONV_K * CONV_K; }
static size_t pixels(const train_layer *l) { return (size_t)l->h_in * l->w_in; }

void train_conv_forward(train_layer *l, const float *params, const float *x, size_t batch)
{
    size_t k = kdim(l), hw = pixels(l), cout = (size_t)l->c_out;
    const float *w = params + l->param_off, *b = w + l->nweight;
    for (size_t s = 0; s < batch; s++) {
        float *cols = l->cols + s * k * hw, *y = l->out + s * l->out_size;
        im2col(x + s * l->in_size, l->c_in, l->h_in, l->w_in, cols);
        for (size_t co = 0; co < cout; co++)
            for (size_t p = 0; p < hw; p++) y[co * hw + p] = b[co];
        train_sgemm(0, 0, cout, hw, k, 1.0f, w, k, cols, hw, 1.0f, y, hw);
    }
}

void train_conv_backward(train_layer *l, const float *params, float *grads, const float *dy,
                         float *dx, size_t batch, const grad_hook *hook)
{
    size_t k = kdim(l), hw = pixels(l), cout = (size_t)l->c_out;
    float *gw = grads + l->param_off, *gb = gw + l->nweight;
    const float *w = params + l->param_off;

    for (size_t co = 0; co < cout; co++) gb[co] = 0;
    for (size_t s = 0; s < batch; s++)
        for (size_t co = 0; co < cout; co++)
            for (size_t p = 0; p < hw; p++) gb[co] += dy[s * l->out_size + co * hw + p];
    /* dW = sum over samples of dy_s cols_s^T; conv weights are small, one piece. */
    for (size_t s = 0; s < batch; s++)
        train_sgemm(0, 1, cout, k, hw, 1.0f, dy + s * l->out_size, hw, l->cols + s * k * hw, hw,
                    s == 0 ? 0.0f : 1.0f, gw, k);
    if (hook) hook->ready(hook->arg, l->param_off);
    if (!dx) return;

    /* dcols = W^T dy_s, then back to pixels; the im2col buffer of sample s is
     * no longer needed once dW has it, so it holds dcols. */
    for (size_t s = 0; s < batch; s++) {
        float *dcols = l->cols + s * k * hw;
        train_sgemm(1, 0, k, hw, cout, 1.0f, w, k, dy + s * l->out_size, hw, 0.0f, dcols, hw);
        col2im(dcols, l->c_in, l->h_in, l->w_in, dx + s * l->in_size);
    }
}
