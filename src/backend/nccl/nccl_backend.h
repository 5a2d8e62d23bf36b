/* The nccl backend's ops (nccl.c): always built, libnccl being loaded at run
 * time; its entry gives them where libnccl, libcudart and a device are. */
#ifndef COLL_NCCL_BACKEND_H
#define COLL_NCCL_BACKEND_H

#include "backend/backend.h"

extern const coll__backend_ops coll__backend_nccl;

#endif
