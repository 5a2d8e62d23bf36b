#include "train/train_blas.h"

#ifdef COLL_HAVE_OPENBLAS
#include <cblas.h>

int train_blas_available(void) { return 1; }

void train_blas_set_threads(int n) { openblas_set_num_threads(n > 0 ? n : 1); }

void train_sgemm(int trans_a, int trans_b, size_t m, size_t n, size_t k, float alpha,
                 const float *a, size_t lda, const float *b, size_t ldb, float beta, float *c,
                 size_t ldc)
{
    cblas_sgemm(CblasRowMajor, trans_a ? CblasTrans : CblasNoTrans,
                trans_b ? CblasTrans : CblasNoTrans, (blasint)m, (blasint)n, (blasint)k, alpha, a,
                (blasint)lda, b, (blasint)ldb, beta, c, (blasint)ldc);
}

#else

int train_blas_available(void) { return 0; }

void train_blas_set_threads(int n) { (void)n; }

/* Reference loop: only for builds without OpenBLAS, where the command refuses
 * to benchmark; kept so the layer tests still mean something there. */
void train_sgemm(int trans_a, int trans_b, size_t m, size_t n, size_t k, float alpha,
                 const float *a, size_t lda, const float *b, size_t ldb, float beta, float *c,
                 size_t ldc)
{
    for (size_t i = 0; i < m; i++)
        for (size_t j = 0; j < n; j++) {
            double s = 0;
            for (size_t p = 0; p < k; p++) {
                float x = trans_a ? a[p * lda + i] : a[i * lda + p];
                float y = trans_b ? b[j * ldb + p] : b[p * ldb + j];
                s += (double)x * y;
            }
            c[i * ldc + j] = (float)(alpha * s) + (beta == 0 ? 0 : beta * c[i * ldc + j]);
        }
}

#endif
