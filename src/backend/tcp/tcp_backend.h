/* The tcp backend's ops (tcp_backend.c), for its entry and for auto, which
 * runs it between hosts. */
#ifndef COLL_TCP_BACKEND_H
#define COLL_TCP_BACKEND_H

#include "backend/backend.h"

extern const coll__backend_ops coll__backend_tcp;

#endif
