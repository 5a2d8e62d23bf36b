#include "train/synth_data.h"

#include <stdlib.h>

#include "coll.h"
#include "train/train_rng.h"

#define TEACHER_STREAM 0x7eac4e2ull
#define SAMPLE_STREAM 0xda7aull

int train_synth_init(synth_data *d, size_t in_size, size_t classes, uint64_t seed)
{
    d->seed = seed;
    d->in_size = in_size;
    d->classes = classes;
    d->teacher = malloc(in_size * classes * sizeof(float));
    if (!d->teacher) return COLL_ENOMEM;
    uint64_t key = train_mix64(seed ^ TEACHER_STREAM);
    for (size_t i = 0; i < in_size * classes; i++) d->teacher[i] = train_uniform(key, i);
    return 0;
}

int train_synth_init_image(synth_data *d, int channels, int side, size_t classes, uint64_t seed)
{
    size_t in = (size_t)channels * side * side;
    int rc = train_synth_init(d, in, classes, seed);
    if (rc) return rc;
    uint64_t key = train_mix64(seed ^ TEACHER_STREAM);
    int patches = (side + 3) / 4;
    for (size_t c = 0; c < classes; c++)
        for (int ch = 0; ch < channels; ch++)
            for (int y = 0; y < side; y++)
                for (int x = 0; x < side; x++) {
                    uint64_t patch = ((c * (size_t)channels + (size_t)ch) * patches +
                                      (size_t)(y / 4)) *
                                         patches +
                                     (size_t)(x / 4);
                    d->teacher[c * in + ((size_t)ch * side + y) * side + x] = train_uniform(key,
                                                                                            patch);
                }
    return 0;
}

void train_synth_batch(const synth_data *d, uint64_t first, size_t batch, float *x, int *labels)
{
    uint64_t key = train_mix64(d->seed ^ SAMPLE_STREAM);
    for (size_t s = 0; s < batch; s++) {
        float *xs = x + s * d->in_size;
        uint64_t base = (first + s) * d->in_size;
        for (size_t j = 0; j < d->in_size; j++) xs[j] = train_uniform(key, base + j);
        int best = 0;
        double best_v = 0;
        for (size_t c = 0; c < d->classes; c++) {
            const float *t = d->teacher + c * d->in_size;
            double v = 0;
            for (size_t j = 0; j < d->in_size; j++) v += (double)t[j] * xs[j];
            if (c == 0 || v > best_v) best = (int)c, best_v = v;
        }
        labels[s] = best;
    }
}

void train_synth_free(synth_data *d)
{
    free(d->teacher);
    d->teacher = NULL;
}
