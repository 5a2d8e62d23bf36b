/* The nccl backend in the table of backends (backends.h): here when libnccl,
 * libcudart and a device are; not in a sweep that names no backend (its
 * buffers are on the GPU). */
#include "backend/backends.h"
#include "backend/nccl/nccl_backend.h"
#include "backend/nccl/nccl_lib.h"

static const coll__backend_ops *probe(char *why, size_t whylen)
{
    return coll__nccl_usable(why, whylen) ? &coll__backend_nccl : NULL;
}

const coll__backend_entry coll__nccl_entry = {
    .name = "nccl",
    .probe = probe,
};
