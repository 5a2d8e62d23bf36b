/* Gradient compression for DDP buckets: fp16/bf16 casts (the all-reduce moves
 * half the bytes) and top-k sparsification (each rank sends its k largest
 * entries as index/value pairs through an all-gather; what it did not send is
 * kept as error feedback and added to the next step's gradient). */
#ifndef TRAIN_COMPRESS_H
#define TRAIN_COMPRESS_H

#include <stddef.h>
#include <stdint.h>

typedef enum compress_kind {
    COMPRESS_NONE,
    COMPRESS_FP16,
    COMPRESS_BF16,
    COMPRESS_TOPK
} compress_kind;

typedef struct compress_spec {
    compress_kind kind;
    double ratio; /* topk: fraction of a bucket's entries sent, in (0, 1] */
} compress_spec;

/* "none", "fp16", "bf16", "topk:0.01"; COLL_EINVAL with the reason in err. */
int train_compress_parse(const char *s, compress_spec *out, char *err, size_t errlen);
/* The name train_compress_parse reads back ("topk:0.01"). */
void train_compress_name(const compress_spec *c, char *buf, size_t len);

void train_compress_to_half(compress_kind kind, const float *src, uint16_t *dst, size_t n);
/* dst = half(src) * scale */
void train_compress_from_half(compress_kind kind, const uint16_t *src, float *dst, size_t n,
                              float scale);

/* One sent entry; 8 bytes, moved as one int64 by the all-gather. */
typedef struct topk_pair {
    uint32_t index; /* within the bucket */
    float value;
} topk_pair;

/* k for a bucket of n entries: ceil(ratio * n), at least 1. */
size_t train_topk_count(size_t n, double ratio);
/* acc holds gradient + residual (n entries); its k largest magnitudes go to
 * out (ascending index) and are zeroed in acc, which is left as the new
 * residual. scratch: n floats. */
void train_topk_select(float *acc, size_t n, size_t k, float *scratch, topk_pair *out);

#endif
