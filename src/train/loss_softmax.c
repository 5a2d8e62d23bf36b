/* Softmax cross-entropy, averaged over the batch. With gradients averaged over
 * ranks, N ranks of batch B then take the step one process takes with N*B. */
#include "train/layer.h"

#include <math.h>

double train_softmax_xent(const float *logits, const int *labels, size_t batch, size_t classes,
                          float *dlogits)
{
    double loss = 0;
    for (size_t s = 0; s < batch; s++) {
        const float *z = logits + s * classes;
        float mx = z[0];
        for (size_t c = 1; c < classes; c++) mx = z[c] > mx ? z[c] : mx;
        double sum = 0;
        for (size_t c = 0; c < classes; c++) sum += exp((double)z[c] - mx);
        loss += log(sum) - ((double)z[labels[s]] - mx);
        if (!dlogits) continue;
        for (size_t c = 0; c < classes; c++) {
            double p = exp((double)z[c] - mx) / sum;
            dlogits[s * classes + c] = (float)((p - (c == (size_t)labels[s])) / (double)batch);
        }
    }
    return loss / (double)batch;
}
