/* jansson allocations counted against REPORT_JSON_BUDGET_BYTES. */
#include "report/report_json_budget.h"

#ifdef COLL_HAVE_JANSSON

#include <jansson.h>
#include <malloc.h>
#include <stddef.h>
#include <stdlib.h>

/* Each block remembers its size so that free can give it back. */
typedef union header {
    size_t n;
    max_align_t align;
} header;

static size_t used;
static int refused;
static json_malloc_t prev_malloc;
static json_free_t prev_free;

static void *budget_malloc(size_t n)
{
    if (n + sizeof(header) > REPORT_JSON_BUDGET_BYTES - used) {
        refused = 1;
        return NULL;
    }
    header *h = malloc(sizeof *h + n);
    if (!h) return NULL;
    /* what the block costs: its header and malloc's own bookkeeping too */
    h->n = malloc_usable_size(h) + sizeof(size_t);
    used += h->n;
    return h + 1;
}

static void budget_free(void *p)
{
    if (!p) return;
    header *h = (header *)p - 1;
    used -= h->n;
    free(h);
}

void report_json_budget_begin(void)
{
    json_get_alloc_funcs(&prev_malloc, &prev_free);
    used = 0;
    refused = 0;
    json_set_alloc_funcs(budget_malloc, budget_free);
}

int report_json_budget_end(void)
{
    json_set_alloc_funcs(prev_malloc, prev_free);
    return refused;
}

#endif
