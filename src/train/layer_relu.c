/* ReLU: y = max(x, 0); the gradient passes where the output is positive. */
#include "train/layer.h"

void train_relu_forward(train_layer *l, const float *x, size_t batch)
{
    size_t n = batch * l->out_size;
    for (size_t i = 0; i < n; i++)
        l->out[i] = !(x[i] <= 0) ? x[i] : 0.0f; /* NaN passes, as in torch */
}

void train_relu_backward(const train_layer *l, const float *dy, float *dx, size_t batch)
{
    size_t n = batch * l->out_size;
    for (size_t i = 0; i < n; i++) dx[i] = l->out[i] > 0 ? dy[i] : 0.0f;
}
