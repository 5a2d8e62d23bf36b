/* Matrix products for the training benchmark: OpenBLAS when the build has it
 * (COLL_HAVE_OPENBLAS), otherwise a plain loop so the library still builds and
 * the command can say what is missing (exit 4). Row-major, C = alpha*op(A)*op(B) + beta*C. */
#ifndef TRAIN_BLAS_H
#define TRAIN_BLAS_H

#include <stddef.h>

/* 1 when matrix products run on OpenBLAS. */
int train_blas_available(void);
/* The one-line reason for exit 4 when they do not. */
#define TRAIN_BLAS_MISSING "built without OpenBLAS: install libopenblas-dev and rebuild"
/* Threads per rank (1 by default: ranks already share the cores). */
void train_blas_set_threads(int n);

void train_sgemm(int trans_a, int trans_b, size_t m, size_t n, size_t k, float alpha,
                 const float *a, size_t lda, const float *b, size_t ldb, float beta, float *c,
                 size_t ldc);

#endif
