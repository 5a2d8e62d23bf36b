#include "train/compress.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coll.h"
#include "core/errbuf.h"
#include "core/half.h"

int train_compress_parse(const char *s, compress_spec *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    if (strcmp(s, "none") == 0) return 0;
    if (strcmp(s, "fp16") == 0) return out->kind = COMPRESS_FP16, 0;
    if (strcmp(s, "bf16") == 0) return out->kind = COMPRESS_BF16, 0;
    if (strncmp(s, "topk:", 5) == 0) {
        char *end;
        double r = strtod(s + 5, &end);
        if (s[5] == '\0' || *end != '\0' || !(r > 0 && r <= 1)) {
            coll__set_err(err, errlen, "--compress: top-k ratio '%s' must be a number in (0,1]",
                          s + 5);
            return COLL_EINVAL;
        }
        out->kind = COMPRESS_TOPK;
        out->ratio = r;
        return 0;
    }
    coll__set_err(err, errlen, "--compress: '%s' is not none, fp16, bf16 or topk:RATIO", s);
    return COLL_EINVAL;
}

void train_compress_name(const compress_spec *c, char *buf, size_t len)
{
    switch (c->kind) {
    case COMPRESS_NONE: snprintf(buf, len, "none"); break;
    case COMPRESS_FP16: snprintf(buf, len, "fp16"); break;
    case COMPRESS_BF16: snprintf(buf, len, "bf16"); break;
    case COMPRESS_TOPK: snprintf(buf, len, "topk:%g", c->ratio); break;
    }
}

void train_compress_to_half(compress_kind kind, const float *src, uint16_t *dst, size_t n)
{
    if (kind == COMPRESS_BF16)
        for (size_t i = 0; i < n; i++) dst[i] = coll__float_to_bf16(src[i]);
    else
        for (size_t i = 0; i < n; i++) dst[i] = coll__float_to_half(src[i]);
}

void train_compress_from_half(compress_kind kind, const uint16_t *src, float *dst, size_t n,
                              float scale)
{
    if (kind == COMPRESS_BF16)
        for (size_t i = 0; i < n; i++) dst[i] = coll__bf16_to_float(src[i]) * scale;
    else
        for (size_t i = 0; i < n; i++) dst[i] = coll__half_to_float(src[i]) * scale;
}

size_t train_topk_count(size_t n, double ratio)
{
    size_t k = (size_t)ceil(ratio * (double)n);
    return k < 1 ? 1 : k > n ? n : k;
}

/* Quickselect: the k-th largest of v[0..n) (v is reordered). */
static float kth_largest(float *v, size_t n, size_t k)
{
    size_t lo = 0, hi = n - 1, want = k - 1;
    while (lo < hi) {
        float pivot = v[lo + (hi - lo) / 2];
        size_t i = lo, j = hi;
        while (i <= j) {
            while (v[i] > pivot) i++;
            while (v[j] < pivot) j--;
            if (i <= j) {
                float t = v[i];
                v[i] = v[j], v[j] = t;
                i++;
                if (j == 0) break;
                j--;
            }
        }
        if (want <= j) hi = j;
        else if (want >= i) lo = i;
        else break;
    }
    return v[want];
}

void train_topk_select(float *acc, size_t n, size_t k, float *scratch, topk_pair *out)
{
    for (size_t i = 0; i < n; i++) scratch[i] = fabsf(acc[i]);
    float thr = kth_largest(scratch, n, k);
    /* Everything above the threshold, then ties at it until k: exactly k entries. */
    size_t above = 0;
    for (size_t i = 0; i < n; i++) above += fabsf(acc[i]) > thr;
    size_t ties = k - above, m = 0;
    for (size_t i = 0; i < n && m < k; i++) {
        float a = fabsf(acc[i]);
        if (a > thr || (a == thr && ties > 0)) {
            if (!(a > thr)) ties--;
            out[m].index = (uint32_t)i;
            out[m].value = acc[i];
            acc[i] = 0;
            m++;
        }
    }
    for (; m < k; m++) out[m] = (topk_pair){0, 0.0f}; /* NaNs compare false: pad */
}
