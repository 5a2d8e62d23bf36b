/* 2x2 max pooling, stride 2; remembers which input won for backward. */
#include "train/layer.h"

#include <string.h>

void train_maxpool_forward(train_layer *l, const float *x, size_t batch)
{
    int h = l->h_in, w = l->w_in, ho = l->h_out, wo = l->w_out;
    for (size_t s = 0; s < batch; s++)
        for (int c = 0; c < l->c_in; c++) {
            const float *plane = x + s * l->in_size + (size_t)c * h * w;
            size_t obase = s * l->out_size + (size_t)c * ho * wo;
            for (int y = 0; y < ho; y++)
                for (int xx = 0; xx < wo; xx++) {
                    int best = (2 * y) * w + 2 * xx;
                    for (int dy = 0; dy < 2; dy++)
                        for (int dx = 0; dx < 2; dx++) {
                            int i = (2 * y + dy) * w + 2 * xx + dx;
                            if (plane[i] > plane[best]) best = i;
                        }
                    l->out[obase + (size_t)y * wo + xx] = plane[best];
                    l->argmax[obase + (size_t)y * wo + xx] = c * h * w + best;
                }
        }
}

void train_maxpool_backward(const train_layer *l, const float *dy, float *dx, size_t batch)
{
    memset(dx, 0, sizeof(float) * batch * l->in_size);
    for (size_t s = 0; s < batch; s++)
        for (size_t o = 0; o < l->out_size; o++)
            dx[s * l->in_size + (size_t)l->argmax[s * l->out_size + o]] += dy[s * l->out_size + o];
}
