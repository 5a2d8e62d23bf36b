/* The merged result files of a report. */
#ifndef REPORT_MERGE_H
#define REPORT_MERGE_H

#include <stddef.h>

#include "report/report_data.h"

/* outdir/combined.csv (communication rows, docs/DESIGN.md header, always written)
 * and outdir/combined_training.csv (training header) when there are training
 * rows. d sorted and deduplicated. 0 or a negative coll_status with err. */
int report_write_combined(const report_data *d, const char *outdir, char *err, size_t errlen);

#endif
