/* Which backends exist, which are usable here, and why not. */
#include "backend/backend.h"
#include "coll_tool.h"
#include "backend/auto.h"
#include "algo/algo.h"

#include <stdio.h>
#include <string.h>

static const char *const backend_names[] = {"tcp", "shm", "auto", "mpi", "nccl", "gloo", NULL};

const char *const *coll_backend_names(void) { return backend_names; }

/* What a user must do to get a backend that is not in this build. */
static const char *missing_reason(const char *name)
{
    if (strcmp(name, "mpi") == 0)
        return "collbench was built without MPI: install libopenmpi-dev and openmpi-bin "
               "(scripts/deps.sh) and rebuild";
    if (strcmp(name, "gloo") == 0)
        return "collbench was built without Gloo: install libgloo-dev and g++ "
               "(scripts/deps.sh) and rebuild";
    return NULL;
}

const coll__backend_ops *coll__backend_find(const char *name, char *err, size_t errlen)
{
    if (!name) name = "";
    if (strcmp(name, "tcp") == 0) return &coll__backend_tcp;
    if (strcmp(name, "shm") == 0) return &coll__backend_shm;
#ifdef COLL_HAVE_MPI
    if (strcmp(name, "mpi") == 0) return &coll__backend_mpi;
#endif
#ifdef COLL_HAVE_GLOO
    if (strcmp(name, "gloo") == 0) return &coll__backend_gloo;
#endif
    if (strcmp(name, "auto") == 0) return &coll__backend_auto;
    if (strcmp(name, "nccl") == 0) return coll__backend_nccl_probe(err, errlen);
    const char *why = missing_reason(name);
    if (why) snprintf(err, errlen, "backend %s unavailable: %s", name, why);
    else
        snprintf(err, errlen, "unknown backend '%s' (known: tcp, shm, auto, mpi, nccl, gloo)",
                 name);
    return NULL;
}

int coll_backend_available(const char *name, char *why, size_t whylen)
{
    char err[256];
    if (coll__backend_find(name, err, sizeof err)) return 1;
    if (why && whylen) snprintf(why, whylen, "%s", err);
    return 0;
}

int coll_backend_known(const char *name)
{
    for (const char *const *b = backend_names; name && *b; b++)
        if (strcmp(*b, name) == 0) return 1;
    return 0;
}

int coll_backend_available_bare(const char *name, char *why, size_t whylen)
{
    char err[256], lead[64];
    if (coll_backend_available(name, err, sizeof err)) return 1;
    snprintf(lead, sizeof lead, "backend %s unavailable: ", name);
    size_t n = strlen(lead);
    if (why && whylen) snprintf(why, whylen, "%s", strncmp(err, lead, n) == 0 ? err + n : err);
    return 0;
}

int coll_backend_needs_mpirun(const char *name) { return strcmp(name, "mpi") == 0; }

int coll_backend_sweeps_by_default(const char *name)
{
    return !coll_backend_needs_mpirun(name) && strcmp(name, "nccl") != 0;
}

size_t coll_backend_default_sweep(const char **out, size_t cap)
{
    size_t n = 0;
    for (const char *const *b = backend_names; *b && n < cap; b++)
        if (coll_backend_sweeps_by_default(*b) && coll_backend_available(*b, NULL, 0))
            out[n++] = *b;
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

/* Gloo's own allreduce algorithms, which only the gloo backend runs. */
static int gloo_allreduce_algo(const char *collective, const char *algo)
{
#ifdef COLL_HAVE_GLOO
    static const char *const names[] = {"default", "ring_chunked", "halving_doubling", "bcube"};
    if (strcmp(collective, "allreduce") != 0) return 0;
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (strcmp(algo, names[i]) == 0) return 1;
#else
    (void)collective;
    (void)algo;
#endif
    return 0;
}

int coll_algo_supported(const char *collective, const char *algo)
{
    coll__kind kind;
    coll__algo_id id;
    if (!collective || !algo || !kind_of(collective, &kind)) return 0;
    if (gloo_allreduce_algo(collective, algo)) return 1;
    if (coll__algo_parse(algo, &id) != 0) return 0;
    return coll__algo_exists(kind, id);
}

const char *coll_algo_auto_pick(const char *collective, size_t bytes, int world)
{
    coll__kind kind;
    if (!collective || world < 1 || !kind_of(collective, &kind)) return NULL;
    coll__algo_id id = coll__algo_select(kind, COLL_ALGO_AUTO, bytes, world);
    return id == COLL_ALGO_AUTO ? NULL : coll__algo_name(id);
}

const char *coll_algo_names(const char *collective)
{
    coll__kind kind;
    if (!collective || !kind_of(collective, &kind)) return "";
    return coll__algo_list(kind);
}
