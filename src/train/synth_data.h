/* Synthetic classification data: inputs uniform in [-1,1), labels from a fixed
 * random linear teacher (argmax of x . T). Sample i depends only on (seed, i),
 * so rank r of N with batch B, taking samples step*N*B + r*B ..., sees exactly
 * the samples one process with batch N*B sees: the two runs can be compared. */
#ifndef TRAIN_SYNTH_DATA_H
#define TRAIN_SYNTH_DATA_H

#include <stddef.h>
#include <stdint.h>

typedef struct synth_data {
    uint64_t seed;
    size_t in_size, classes;
    float *teacher; /* classes x in_size */
} synth_data;

int train_synth_init(synth_data *d, size_t in_size, size_t classes, uint64_t seed);
/* For images (channels x side x side): a teacher constant over 4x4 patches, so
 * the label depends on local intensities a convolution can see, not on
 * pixel-level white noise no pooled CNN could learn. */
int train_synth_init_image(synth_data *d, int channels, int side, size_t classes, uint64_t seed);
/* Samples first .. first+batch-1 into x (batch x in_size) and labels. */
void train_synth_batch(const synth_data *d, uint64_t first, size_t batch, float *x, int *labels);
void train_synth_free(synth_data *d);

#endif
