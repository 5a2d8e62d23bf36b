/* A program's trace as the commands take it (replay, model --trace): trace
 * directories (their rank<R>.jsonl files) or rank files, every one read and,
 * where every rank's is needed, checked against the others
 * (replay_trace_check): an inconsistent trace is a clear exit 2. */
#ifndef CLI_TRACE_SET_H
#define CLI_TRACE_SET_H

#include <stddef.h>

#include "replay/trace.h"

typedef struct cli_trace_set {
    char **paths;
    size_t n, cap;
    replay_trace *traces;   /* n, in the order of paths */
    replay_trace **by_rank; /* world entries when checked, else NULL */
    int world;              /* the traces' world */
} cli_trace_set;

/* Reads args[0..nargs) into s (freed with cli_trace_set_free, also on failure).
 * whole: every rank's trace is required and they are checked against each
 * other (by_rank set); else each file stands alone. Messages start with
 * prefix. 0, or an exit code with the message on stderr: EXIT_USAGE (missing,
 * not a trace, disagreeing ranks), EXIT_UNAVAILABLE (no jansson),
 * EXIT_RUNTIME (memory). */
int cli_trace_set_load(const char *prefix, const char *const *args, size_t nargs, int whole,
                       cli_trace_set *s);
void cli_trace_set_free(cli_trace_set *s);

#endif
