/* The message for a peer of another wire version: see wire_version.h. */
#include "core/wire_version.h"

#include <stdio.h>

void coll__wire_version_mismatch(char *buf, size_t n, const char *who, unsigned theirs)
{
    snprintf(buf, n,
             "%s speaks collbench wire version %u, this build speaks %u: run the same "
             "collbench build on every host of the job",
             who, theirs, COLL_WIRE_VERSION);
}
