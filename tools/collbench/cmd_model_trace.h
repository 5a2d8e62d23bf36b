/* collbench model --trace: a program's recorded communication (a trace of
 * collbench replay's format) as the workload of the cost model
 * (costmodel/model_workload.h): every rank's calls, each predicted on each
 * --predict cluster and summed per collective; the slowest rank's shown. */
#ifndef CMD_MODEL_TRACE_H
#define CMD_MODEL_TRACE_H

#include <stddef.h>

#include "costmodel/model_fit.h"
#include "costmodel/model_predict.h"
#include "costmodel/model_workload.h"

/* One rank's calls, in the order it made them. */
typedef struct cmd_model_rank {
    int rank;
    model_call *calls;
    size_t ncalls;
    size_t same_as; /* the first rank (index) whose calls are these: data-parallel
                     * ranks are alike, and each list is predicted once */
} cmd_model_rank;

typedef struct cmd_model_trace {
    char path[4096]; /* the directory or the one rank's file read */
    int world;       /* the trace's ranks */
    cmd_model_rank *ranks;
    size_t nranks;   /* world for a directory (checked against each other), 1 for a file */
    size_t distinct; /* ranks whose calls no earlier rank made */
} cmd_model_trace;

/* arg: a trace directory (every rank's file, checked against each other as
 * replay checks them) or one rank's file. 0, or an exit code (EXIT_USAGE:
 * missing, not a trace, ranks that disagree, naming the file and line;
 * EXIT_UNAVAILABLE: built without jansson; EXIT_RUNTIME: memory) with the
 * message on stderr. */
int cmd_model_trace_load(const char *arg, cmd_model_trace *t);
void cmd_model_trace_free(cmd_model_trace *t);

/* Prints, per machine, backend and buffer kind of the fits and per cluster,
 * the trace's predicted communication: the rank whose calls add up to the
 * most, per collective, and the range over the ranks. 1 when no call could be predicted
 * anywhere (why on stderr), else 0. */
int cmd_model_trace_print(const model_fits *f, const model_cluster *clusters,
                          const char *const *specs, size_t nclusters, const cmd_model_trace *t);

#endif
