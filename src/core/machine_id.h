/* What names a machine for tuning: CPU model and the instruction-set flags the
 * copy and reduce loops care about (/proc/cpuinfo), kernel release (uname),
 * cores online. A tuning file measured on one machine (src/core/tuning_file.h)
 * carries it and is applied only where it matches. */
#ifndef COLL_MACHINE_ID_H
#define COLL_MACHINE_ID_H

#include <stddef.h>

typedef struct coll__machine_id {
    char cpu[128];    /* "AMD EPYC 7B13", or "unknown" */
    char flags[160];  /* "avx2 avx512f erms", those of a fixed list present */
    char kernel[128]; /* "6.1.0-18-amd64" */
    int cores;        /* online, 0: unknown */
} coll__machine_id;

/* This machine's. */
void coll__machine_id_here(coll__machine_id *m);
/* 0 when a and b are the same machine for tuning (CPU model, flags, kernel
 * equal: cores may differ, a rank count is the plan's own input); else 1 and,
 * in why, the first difference ("CPU model 'X' here, 'Y' in the file"). */
int coll__machine_id_differs(const coll__machine_id *here, const coll__machine_id *file, char *why,
                             size_t whylen);

#endif
