/* The rank this process last blamed for a failure (coll_tool.h's
 * coll_last_blamed_rank): every failed call and coll_comm_create notes it, so
 * a rank can tell its launcher whom it waited on as it exits. */
#include "comm/comm.h"
#include "coll_tool.h"

#include <stdatomic.h>

static atomic_int last_blamed = -1;

void coll__comm_note_blame(int world_rank, int status)
{
    if (world_rank >= 0) atomic_store(&last_blamed, world_rank);
    else if (status == COLL_ETIMEDOUT) atomic_store(&last_blamed, COLL_BLAMED_UNKNOWN);
}

int coll_last_blamed_rank(void) { return atomic_load(&last_blamed); }
