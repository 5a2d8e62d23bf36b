#include "train/param_hash.h"

#include <stdlib.h>
#include <string.h>

uint64_t train_param_hash(const float *p, size_t n)
{
    /* four independent lanes so the multiply chain is not the bottleneck */
    uint64_t h[4] = {0xcbf29ce484222325ull, 0x84222325cbf29ce4ull, 0x9e3779b97f4a7c15ull, 1};
    const uint64_t prime = 0x100000001b3ull;
    size_t i = 0;
    uint32_t w[4];
    for (; i + 4 <= n; i += 4) {
        memcpy(w, p + i, sizeof w);
        for (int j = 0; j < 4; j++) h[j] = (h[j] ^ w[j]) * prime;
    }
    for (; i < n; i++) {
        memcpy(w, p + i, sizeof w[0]);
        h[0] = (h[0] ^ w[0]) * prime;
    }
    return (h[0] ^ (h[1] * 31) ^ (h[2] * 131) ^ (h[3] * 1313)) + n;
}

int train_param_hash_check(coll_comm *comm, const float *p, size_t n, int *bad_rank)
{
    int world = coll_comm_size(comm);
    int64_t mine = (int64_t)train_param_hash(p, n);
    int64_t *all = malloc((size_t)world * sizeof *all);
    if (!all) return COLL_ENOMEM;
    int rc = coll_allgather(comm, &mine, all, 1, COLL_INT64);
    *bad_rank = -1;
    for (int r = 1; rc == 0 && r < world && *bad_rank < 0; r++)
        if (all[r] != all[0]) *bad_rank = r;
    free(all);
    return rc ? rc : *bad_rank >= 0;
}
