/* The gloo backend in the table of backends (backends.h): here when collbench
 * was built with Gloo, else what to install; Gloo's own all-reduce algorithms. */
#include "backend/backends.h"
#include "backend/gloo/gloo_backend.h"

#include <stdio.h>
#include <string.h>

static const coll__backend_ops *probe(char *why, size_t whylen) {
#ifdef COLL_HAVE_GLOO
  (void)why;
  (void)whylen;
  return &coll__backend_gloo;
#else
  snprintf(why, whylen,
           "collbench was built without Gloo: install libgloo-dev and g++ "
           "(scripts/deps.sh) and rebuild");
  return NULL;
#endif
}

/* Gloo's own allreduce algorithms, which only the gloo backend runs. */
static int gloo_algo(const char *collective, const char *algo) {
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

const coll__backend_entry coll__gloo_entry = {
    .name = "gloo",
    .probe = probe,
    .flags = COLL__BACKEND_SWEEPS,
    .knobs = (const coll__tunable_table *const[]){&coll__gloo_tunables, NULL},
    .own_algo = gloo_algo,
};
