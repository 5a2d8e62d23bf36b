/* How algorithms cut a vector: count elements into near-equal blocks, windows
 * of consecutive blocks, and chunks of one block for pipelining. */
#include "algo/algo.h"

void coll__block_range(size_t count, int size, int i, size_t *off, size_t *cnt)
{
    size_t n = size > 0 ? (size_t)size : 1;
    size_t base = count / n, rem = count % n, ui = (size_t)i;
    *cnt = base + (ui < rem ? 1 : 0);
    *off = ui * base + (ui < rem ? ui : rem);
}

void coll__blocks_span(size_t count, int size, int first, int last, size_t *off, size_t *cnt)
{
    size_t end, last_cnt;
    coll__block_range(count, size, first, off, &last_cnt);
    coll__block_range(count, size, last - 1, &end, &last_cnt);
    end += last_cnt;
    *cnt = end - *off;
}

void coll__block_chunk(size_t count, int size, int i, size_t ce, size_t k, size_t *off, size_t *cnt)
{
    size_t bo, bc, co;
    coll__block_range(count, size, i, &bo, &bc);
    coll__chunk_range(bc, ce, k, &co, cnt);
    *off = bo + co;
}
