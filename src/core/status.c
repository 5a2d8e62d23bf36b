/* Messages and symbolic names of coll_status codes, both generated from
 * COLL_STATUS_MAP so a new code cannot be forgotten in one of them. */
#include "coll.h"

const char *coll_strerror(int status)
{
    switch (status) {
#define COLL_STATUS_MSG(name, val, msg) \
    case (val): return (msg);
        COLL_STATUS_MAP(COLL_STATUS_MSG)
#undef COLL_STATUS_MSG
    }
    return "unknown error";
}

const char *coll_status_name(int status)
{
    switch (status) {
#define COLL_STATUS_SYM(name, val, msg) \
    case (val): return "COLL_" #name;
        COLL_STATUS_MAP(COLL_STATUS_SYM)
#undef COLL_STATUS_SYM
    }
    return "COLL_UNKNOWN";
}
