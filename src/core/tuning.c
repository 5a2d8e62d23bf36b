/* One tuning variable read, checked and written: see tuning.h. */
#include "core/tuning.h"

#include <limits.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "coll.h"
#include "core/env.h"
#include "core/tuning_file.h"

/* The tuning file's values in force: published once, whole, by the loader
 * above (src/backend/tuning_load.c); NULL: none. */
static const coll__tuning_values *file_layer;

void coll__tunable_layer_install(const coll__tuning_values *v)
{
    __atomic_store_n(&file_layer, v, __ATOMIC_RELEASE);
}

int coll__tunable_file_value(const coll__tunable *t, uint64_t *out)
{
    const coll__tuning_values *v = __atomic_load_n(&file_layer, __ATOMIC_ACQUIRE);
    for (size_t i = 0; v && i < v->count; i++)
        if (v->v[i].row == t || strcmp(v->v[i].row->name, t->name) == 0) {
            *out = v->v[i].value;
            return 1;
        }
    return 0;
}

const char *coll__tunable_source(const coll__tunable *t)
{
    const char *e = getenv(t->name);
    uint64_t v;
    if (e && *e) return "env";
    return coll__tunable_file_value(t, &v) ? "file" : "default";
}

/* Whether a communicator of ranks ranks is in the configuration t's default
 * was measured for (outside it, the default is 0). */
static int in_scope(const coll__tunable *t, int ranks, int oversub)
{
    switch (t->when) {
    case COLL__TUNE_PAIR: return ranks == 2;
    case COLL__TUNE_OVERSUB: return oversub;
    case COLL__TUNE_CORES: return !oversub;
    default: return 1;
    }
}

uint64_t coll__tunable_default(const coll__tunable *t, int ranks, int oversub)
{
    return in_scope(t, ranks, oversub) ? t->dflt : 0;
}

static int read_row(const coll__tunable *t, uint64_t dflt, uint64_t *out, coll__err *err)
{
    if (t->kind == COLL__TUNE_FLAG) {
        int on;
        int rc = coll__env_flag(t->name, dflt != 0, &on, err);
        if (rc == COLL_OK) *out = (uint64_t)on;
        return rc;
    }
    if (t->kind == COLL__TUNE_BYTES) return coll__env_bytes(t->name, dflt, t->lo, t->hi, out, err);
    return coll__env_count(t->name, dflt, t->lo, t->hi, out, err);
}

int coll__tunable_read(const coll__tunable *t, int ranks, int oversub, uint64_t *out,
                       coll__err *err)
{
    uint64_t dflt = coll__tunable_default(t, ranks, oversub), v;
    /* The file's, under the environment's. A file's value was measured where
     * the default holds (collbench tune runs 4 ranks on 2 cores for an
     * oversubscribed one), so it replaces the default only there: a 1M window
     * for 4 ranks on 2 cores is no window at 2 ranks on 2 cores. The
     * environment is the user's word and holds everywhere. */
    if (coll__tunable_file_value(t, &v) && in_scope(t, ranks, oversub)) dflt = v;
    return read_row(t, dflt, out, err);
}

int coll__tunable_check(const coll__tunable *t, coll__err *err)
{
    uint64_t v;
    return read_row(t, 0, &v, err);
}

void coll__tunable_format(const coll__tunable *t, uint64_t v, char *buf, size_t len)
{
    static const char units[] = "GMK";
    if (t->kind == COLL__TUNE_BYTES && v) {
        for (int i = 0; units[i]; i++) {
            unsigned shift = 10u * (unsigned)(3 - i);
            if (v % (1ull << shift) == 0) {
                snprintf(buf, len, "%llu%c", (unsigned long long)(v >> shift), units[i]);
                return;
            }
        }
    }
    snprintf(buf, len, "%llu", (unsigned long long)v);
}

void coll__tunable_format_default(const coll__tunable *t, char *buf, size_t len)
{
    char v[32];
    coll__tunable_format(t, t->dflt, v, sizeof v);
    const char *when = t->dflt == 0                    ? ""
                       : t->when == COLL__TUNE_PAIR    ? " at 2 ranks, else 0"
                       : t->when == COLL__TUNE_OVERSUB ? " with more ranks than cores, else 0"
                       : t->when == COLL__TUNE_CORES   ? " with a core per rank, else 0"
                                                       : "";
    snprintf(buf, len, "%s%s", v, when);
}
