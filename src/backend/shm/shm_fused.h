/* Fused reduce-and-write-out kernels of the direct all-reduce (shm_fused.c). */
#ifndef COLL_SHM_FUSED_H
#define COLL_SHM_FUSED_H

#include <stddef.h>

typedef struct shm_fused_state {
    int on;           /* coll__shm_fused_f32_sum runs here */
    const float **in; /* [n] every input at the chunk being reduced */
    float **out;      /* [n] the outputs there */
} shm_fused_state;

/* 1 when this CPU runs coll__shm_fused_f32_sum (x86-64 with AVX2). */
int coll__shm_fused_available(void);
/* out[q][i] = in[0][i] + in[1][i] + ... + in[n-1][i] for every q < nout and
 * i < m (n >= 2); streaming stores when stream and every out[q] is 32-byte
 * aligned (the caller fences before publishing). */
void coll__shm_fused_f32_sum(float *const *out, int nout, const float *const *in, int n, size_t m,
                             int stream);

#endif
