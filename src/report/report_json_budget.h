/* A memory budget for jansson while the report reads one JSON file. Parsed
 * JSON can take 80 times its size ("[{},{},...]": 60 MB of it took 4.8 GB and
 * 49 s), so the input size bound alone does not bound memory. */
#ifndef REPORT_JSON_BUDGET_H
#define REPORT_JSON_BUDGET_H

#include <stddef.h>

/* Far above a real result file's needs (a suite's JSON takes a few MB parsed). */
#define REPORT_JSON_BUDGET_BYTES ((size_t)256 << 20)

/* From begin to end, jansson's allocations are counted and fail past
 * REPORT_JSON_BUDGET_BYTES; everything jansson allocated in between must be
 * freed before end (jansson's allocator is global: single-threaded use only). */
void report_json_budget_begin(void);
/* 1 when an allocation was refused since begin. Restores jansson's allocator. */
int report_json_budget_end(void);

#endif
