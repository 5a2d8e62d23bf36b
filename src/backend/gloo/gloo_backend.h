/* The gloo backend's ops (gloo.c and the C++ layer, built only with Gloo) and
 * tuning variables (gloo_knobs.c, always built: README lists them either way). */
#ifndef COLL_GLOO_BACKEND_H
#define COLL_GLOO_BACKEND_H

#include "backend/backend.h"
#include "core/tuning.h"

#ifdef COLL_HAVE_GLOO
extern const coll__backend_ops coll__backend_gloo;
#endif

enum { COLL__GLOO_KNOB_CHECK };
extern const coll__tunable_table coll__gloo_tunables;

#endif
