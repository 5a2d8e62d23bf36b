/* Placeholder: fault injection is being implemented (reliability issue). */
#include "core/fault.h"

int coll_fault_init(int rank, char *err, size_t errlen)
{
    (void)rank;
    (void)err;
    (void)errlen;
    return 0;
}

coll_fault_action coll_fault_hit(coll_fault_point point, size_t bytes)
{
    (void)point;
    (void)bytes;
    return COLL_FAULT_NONE;
}
