/* Which backends exist, which are usable here, and why not: all read from the
 * table of backends (backends.h). */
#include "backend/backends.h"
#include "coll_tool.h"
#include "algo/algo.h"
#include "backend/tcp/tcp_algo_knobs.h"

#include <stdio.h>
#include <string.h>

const char *const *coll_backend_names(void) { return coll__backend_names; }

static const coll__backend_entry *entry_of(const char *name)
{
    for (const coll__backend_entry *const *e = coll__backends; name && *e; e++)
        if (strcmp((*e)->name, name) == 0) return *e;
    return NULL;
}

const coll__backend_ops *coll__backend_find(const char *name, char *err, size_t errlen)
{
    if (!name) name = "";
    coll__tuning_ensure();
    const coll__backend_entry *e = entry_of(name);
    if (!e) {
        char known[256] = "";
        size_t used = 0;
        for (const coll__backend_entry *const *k = coll__backends; *k && used < sizeof known; k++) {
            int w = snprintf(known + used, sizeof known - used, "%s%s", used ? ", " : "",
                             (*k)->name);
            if (w > 0) used += (size_t)w;
        }
        snprintf(err, errlen, "unknown backend '%s' (known: %s)", name, known);
        return NULL;
    }
    char why[512] = "";
    const coll__backend_ops *ops = e->probe(why, sizeof why);
    if (!ops) snprintf(err, errlen, "backend %s unavailable: %s", name, why);
    return ops;
}

int coll_backend_available(const char *name, char *why, size_t whylen)
{
    char err[256];
    if (coll__backend_find(name, err, sizeof err)) return 1;
    if (why && whylen) snprintf(why, whylen, "%s", err);
    return 0;
}

int coll_backend_known(const char *name) { return entry_of(name) != NULL; }

int coll_backend_available_bare(const char *name, char *why, size_t whylen)
{
    char err[256], lead[64];
    if (coll_backend_available(name, err, sizeof err)) return 1;
    snprintf(lead, sizeof lead, "backend %s unavailable: ", name);
    size_t n = strlen(lead);
    if (why && whylen) snprintf(why, whylen, "%s", strncmp(err, lead, n) == 0 ? err + n : err);
    return 0;
}

int coll_backend_needs_mpirun(const char *name)
{
    const coll__backend_entry *e = entry_of(name);
    return e && (e->flags & COLL__BACKEND_NEEDS_MPIRUN);
}

int coll_backend_sweeps_by_default(const char *name)
{
    const coll__backend_entry *e = entry_of(name);
    return e && (e->flags & COLL__BACKEND_SWEEPS);
}

size_t coll_backend_default_sweep(const char **out, size_t cap)
{
    size_t n = 0;
    for (const coll__backend_entry *const *e = coll__backends; *e && n < cap; e++)
        if (((*e)->flags & COLL__BACKEND_SWEEPS) && coll_backend_available((*e)->name, NULL, 0))
            out[n++] = (*e)->name;
    return n;
}

const char *coll_backend_preferred(const char *fallback)
{
    return coll_backend_available("auto", NULL, 0) ? "auto" : fallback;
}

static int kind_of(const char *collective, coll__kind *out)
{
    for (int k = 0; k < COLL_KIND_COUNT; k++)
        if (strcmp(collective, coll__kind_name((coll__kind)k)) == 0) {
            *out = (coll__kind)k;
            return 1;
        }
    return 0;
}

/* An algorithm that only one backend runs (Gloo's own). */
static int own_algo(const char *collective, const char *algo)
{
    for (const coll__backend_entry *const *e = coll__backends; *e; e++)
        if ((*e)->own_algo && (*e)->own_algo(collective, algo)) return 1;
    return 0;
}

int coll_algo_supported(const char *collective, const char *algo)
{
    coll__kind kind;
    coll__algo_id id;
    if (!collective || !algo || !kind_of(collective, &kind)) return 0;
    if (own_algo(collective, algo)) return 1;
    if (coll__algo_parse(algo, &id) != 0) return 0;
    return coll__algo_exists(kind, id);
}

const char *coll_algo_auto_pick(const char *collective, size_t bytes, int world)
{
    coll__kind kind;
    if (!collective || world < 1 || !kind_of(collective, &kind)) return NULL;
    /* the tcp backend's crossovers (environment, tuning file, defaults; a
     * value out of range: the defaults, as the run itself refuses it) */
    coll__algo_limits lim;
    coll__err err;
    coll__err_init(&err, NULL, 0);
    int bad = coll__tcp_algo_limits(world, &lim, &err);
    coll__algo_id id = coll__algo_select(kind, COLL_ALGO_AUTO, bytes, world, bad ? NULL : &lim);
    return id == COLL_ALGO_AUTO ? NULL : coll__algo_name(id);
}

const char *coll_algo_names(const char *collective)
{
    coll__kind kind;
    if (!collective || !kind_of(collective, &kind)) return "";
    return coll__algo_list(kind);
}

size_t coll_backend_scratch_bytes(const char *backend, const char *collective,
                                  const uint64_t *bytes, size_t nbytes, int nranks)
{
    const coll__backend_entry *e = entry_of(backend);
    coll__kind kind;
    if (!e || !e->scratch_bytes || !collective || !kind_of(collective, &kind)) return 0;
    coll__tuning_ensure();
    return e->scratch_bytes(kind, bytes, nbytes, nranks);
}
