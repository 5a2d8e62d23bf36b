/* Training and memory rows into the docs/DESIGN.md JSON file, one array per model
 * under results.training and results.memory, keys exactly the CSV header's. */
#include "train/train_metrics.h"

#include <stdlib.h>

#include "rows/result.h"
#include "coll.h"
#include "core/errbuf.h"

#ifndef COLL_HAVE_JANSSON

int train_json_write(const char *path, int world_size, const char *config_json,
                     const train_row *rows, size_t n, const train_mem_row *mem, size_t nmem,
                     char *err, size_t errlen)
{
    (void)world_size, (void)config_json, (void)rows, (void)n, (void)mem, (void)nmem;
    coll__set_err(err, errlen,
                  "cannot write %s: built without jansson (apt-get install libjansson-dev)", path);
    return COLL_EUNAVAIL;
}

#else

#include <jansson.h>
#include <math.h>
#include <string.h>

static json_t *number(double v) { return isfinite(v) ? json_real(v) : json_null(); }

static json_t *train_row_json(const train_row *r)
{
    return json_pack(
        "{s:s,s:s,s:s,s:I,s:s,s:s,s:i,s:i,s:o,s:s,s:i,s:o,s:o,s:o,s:o,s:o,s:o,s:o,s:o}",
        "timestamp", r->timestamp, "host", r->host, "model", r->model, "params",
        (json_int_t)r->params, "mode", r->mode, "backend", r->backend, "nprocs", r->nprocs, "batch",
        r->batch, "bucket_mb", number(r->bucket_mb), "compress", r->compress, "steps", r->steps,
        "step_ms_avg", number(r->step_ms_avg), "step_ms_p50", number(r->step_ms_p50), "step_ms_p99",
        number(r->step_ms_p99), "compute_ms", number(r->compute_ms), "comm_exposed_ms",
        number(r->comm_exposed_ms), "comm_overhead_pct", number(r->comm_overhead_pct),
        "samples_per_s", number(r->samples_per_s), "scaling_eff", number(r->scaling_eff));
}

static json_t *mem_row_json(const train_mem_row *r)
{
    const train_mem *m = &r->mem;
    return json_pack("{s:s,s:i,s:I,s:I,s:I,s:I,s:I,s:I}", "model", r->model, "batch", r->batch,
                     "params_bytes", (json_int_t)m->params_bytes, "grads_bytes",
                     (json_int_t)m->grads_bytes, "optim_bytes", (json_int_t)m->optim_bytes,
                     "activations_bytes", (json_int_t)m->activations_bytes, "comm_buffers_bytes",
                     (json_int_t)m->comm_buffers_bytes, "peak_rss_bytes",
                     (json_int_t)m->peak_rss_bytes);
}

/* The rows of one model as JSON array text, or NULL. */
static char *group_text(const train_row *rows, size_t n, const train_mem_row *mem, size_t nmem,
                        const char *model)
{
    json_t *a = json_array();
    for (size_t i = 0; a && i < n; i++)
        if (strcmp(rows[i].model, model) == 0) json_array_append_new(a, train_row_json(&rows[i]));
    for (size_t i = 0; a && i < nmem; i++)
        if (strcmp(mem[i].model, model) == 0) json_array_append_new(a, mem_row_json(&mem[i]));
    char *text = a ? json_dumps(a, JSON_COMPACT) : NULL;
    json_decref(a);
    return text;
}

static int write_group(const char *path, const bench_json_meta *meta, const char *section,
                       const char *model, const train_row *rows, size_t n, const train_mem_row *mem,
                       size_t nmem, char *err, size_t errlen)
{
    char *text = group_text(rows, n, mem, nmem, model);
    if (!text)
        return coll__set_err(err, errlen, "%s: out of memory building JSON", path), COLL_ENOMEM;
    int rc = strcmp(text, "[]") == 0
                 ? 0
                 : bench_json_merge_rows(path, meta, section, model, text, err, errlen);
    free(text);
    return rc;
}

int train_json_write(const char *path, int world_size, const char *config_json,
                     const train_row *rows, size_t n, const train_mem_row *mem, size_t nmem,
                     char *err, size_t errlen)
{
    bench_json_meta meta = {.name = "collbench",
                            .world_size = world_size,
                            .device = "cpu",
                            .benchmark_iters = n ? rows[0].steps : 0,
                            .extra_config_json = config_json};
    int rc = 0;
    /* one merge per model and section: models in order of first appearance */
    for (size_t i = 0; rc == 0 && i < n; i++) {
        size_t j = 0;
        while (j < i && strcmp(rows[j].model, rows[i].model) != 0) j++;
        if (j == i)
            rc = write_group(path, &meta, "training", rows[i].model, rows, n, NULL, 0, err, errlen);
    }
    for (size_t i = 0; rc == 0 && i < nmem; i++) {
        size_t j = 0;
        while (j < i && strcmp(mem[j].model, mem[i].model) != 0) j++;
        if (j == i)
            rc = write_group(path, &meta, "memory", mem[i].model, NULL, 0, mem, nmem, err, errlen);
    }
    return rc;
}

#endif
