/* The names torch gives its collectives and dtypes in profiler events, mapped
 * to the trace format's ops and libcoll's dtypes. Coalesced variants map to
 * their collective: the importer counts their elements together, as one call. */
#include <string.h>

#include "replay/trace_import.h"

typedef struct op_name {
    const char *name;
    int op; /* a replay_op, or -1: not a communication call */
} op_name;

static const op_name op_names[] = {
    {"allreduce", REPLAY_ALLREDUCE},
    {"all_reduce", REPLAY_ALLREDUCE},
    {"allreduce_coalesced", REPLAY_ALLREDUCE},
    {"all_reduce_coalesced", REPLAY_ALLREDUCE},
    {"allgather", REPLAY_ALLGATHER},
    {"all_gather", REPLAY_ALLGATHER},
    {"_allgather_base", REPLAY_ALLGATHER},
    {"allgather_base", REPLAY_ALLGATHER},
    {"_all_gather_base", REPLAY_ALLGATHER},
    {"allgather_coalesced", REPLAY_ALLGATHER},
    {"all_gather_coalesced", REPLAY_ALLGATHER},
    {"allgather_into_tensor_coalesced", REPLAY_ALLGATHER},
    {"all_gather_into_tensor", REPLAY_ALLGATHER},
    {"all_gather_into_tensor_coalesced", REPLAY_ALLGATHER},
    {"reduce_scatter", REPLAY_REDUCESCATTER},
    {"reducescatter", REPLAY_REDUCESCATTER},
    {"_reduce_scatter_base", REPLAY_REDUCESCATTER},
    {"reduce_scatter_base", REPLAY_REDUCESCATTER},
    {"reduce_scatter_tensor", REPLAY_REDUCESCATTER},
    {"reduce_scatter_tensor_coalesced", REPLAY_REDUCESCATTER},
    {"broadcast", REPLAY_BROADCAST},
    {"_broadcast_oop", REPLAY_BROADCAST},
    {"reduce", REPLAY_REDUCE},
    {"_reduce_oop", REPLAY_REDUCE},
    {"alltoall", REPLAY_ALLTOALL},
    {"all_to_all", REPLAY_ALLTOALL},
    {"alltoall_base", REPLAY_ALLTOALL},
    {"all_to_allv", REPLAY_ALLTOALL},
    {"all_to_all_single", REPLAY_ALLTOALL},
    {"barrier", REPLAY_BARRIER},
    {"monitored_barrier", REPLAY_BARRIER},
    {"send", REPLAY_SEND},
    {"recv", REPLAY_RECV},
    {"recvAnySource", REPLAY_RECV}, /* refused where read: no peer */
    {"recv_any_source", REPLAY_RECV},
    {"gather", REPLAY_GATHER},
    {"scatter", REPLAY_SCATTER},
    /* events of the process group's life, not calls a program makes */
    {"wait", -1},
    {"init", -1},
    {"split", -1},
    {"abort", -1},
    {"shutdown", -1},
};

int replay_import_any_source(const char *name)
{
    return name && (!strcmp(name, "recvAnySource") || !strcmp(name, "recv_any_source"));
}

int replay_import_op(const char *name, replay_op *op)
{
    if (!name) return -1;
    for (size_t i = 0; i < sizeof op_names / sizeof op_names[0]; i++)
        if (strcmp(name, op_names[i].name) == 0) {
            if (op_names[i].op < 0) return 1;
            *op = (replay_op)op_names[i].op;
            return 0;
        }
    return -1;
}

typedef struct dtype_name {
    const char *name;
    coll_dtype dt;
} dtype_name;

/* c10::toString(ScalarType) first, then caffe2::TypeMeta::name() as "Input
 * type" writes it. Bool travels as bytes (as NCCL sends it). */
static const dtype_name dtype_names[] = {
    {"Float", COLL_FLOAT32},
    {"Double", COLL_FLOAT64},
    {"Half", COLL_FLOAT16},
    {"BFloat16", COLL_BFLOAT16},
    {"Char", COLL_INT8},
    {"Byte", COLL_UINT8},
    {"Bool", COLL_UINT8},
    {"Int", COLL_INT32},
    {"Long", COLL_INT64},
    {"float", COLL_FLOAT32},
    {"double", COLL_FLOAT64},
    {"c10::Half", COLL_FLOAT16},
    {"c10::BFloat16", COLL_BFLOAT16},
    {"signed char", COLL_INT8},
    {"unsigned char", COLL_UINT8},
    {"bool", COLL_UINT8},
    {"int", COLL_INT32},
    {"long int", COLL_INT64},
    {"long", COLL_INT64},
    {"int64_t", COLL_INT64},
};

int replay_import_dtype(const char *name, coll_dtype *out)
{
    if (!name) return -1;
    for (size_t i = 0; i < sizeof dtype_names / sizeof dtype_names[0]; i++)
        if (strcmp(name, dtype_names[i].name) == 0) {
            *out = dtype_names[i].dt;
            return 0;
        }
    return -1;
}
