/* Row storage: the rows the readers (report_read_csv.c, report_read_json.c)
 * add, in growing arrays. */
#include "report/report_data.h"

#include "coll.h"

#include <stdlib.h>
#include <string.h>

static int grow(void **p, size_t *cap, size_t n, size_t size)
{
    if (n < *cap) return 0;
    size_t c = *cap ? *cap * 2 : 64;
    void *q = realloc(*p, c * size);
    if (!q) return COLL_ENOMEM;
    *p = q;
    *cap = c;
    return 0;
}

int report_add_comm(report_data *d, const bench_row *r)
{
    if (grow((void **)&d->comm, &d->comm_cap, d->ncomm, sizeof *r)) return COLL_ENOMEM;
    d->comm[d->ncomm++] = *r;
    return 0;
}

int report_add_train(report_data *d, const report_train_row *r)
{
    if (grow((void **)&d->train, &d->train_cap, d->ntrain, sizeof *r)) return COLL_ENOMEM;
    d->train[d->ntrain++] = *r;
    return 0;
}

int report_add_mem(report_data *d, const report_mem_row *r)
{
    if (grow((void **)&d->mem, &d->mem_cap, d->nmem, sizeof *r)) return COLL_ENOMEM;
    d->mem[d->nmem++] = *r;
    return 0;
}

int report_add_replay(report_data *d, const bench_replay_row *r)
{
    if (grow((void **)&d->replay, &d->replay_cap, d->nreplay, sizeof *r)) return COLL_ENOMEM;
    d->replay[d->nreplay++] = *r;
    return 0;
}

void report_data_free(report_data *d)
{
    free(d->comm);
    free(d->train);
    free(d->mem);
    free(d->replay);
    memset(d, 0, sizeof *d);
}
