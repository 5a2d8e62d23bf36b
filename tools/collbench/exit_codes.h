/* The exit codes of every collbench command, in one place (docs/DESIGN.md
 * "Exit codes"; ctest design/exit_codes compares that table with this file). */
#ifndef COLLBENCH_EXIT_CODES_H
#define COLLBENCH_EXIT_CODES_H

/* 1: a result was wrong; check: a step failed; report: an input file or row
 * was rejected (the rest is still reported). */
#define EXIT_WRONG 1
/* 2: bad usage (the message names the flag); report: also DIR exists. */
#define EXIT_USAGE 2
/* 3: runtime failure (timeout, a peer died: the message names the rank; an
 * output could not be written). */
#define EXIT_RUNTIME 3
/* 4: a backend or feature is not available here (the message says how to get it). */
#define EXIT_UNAVAILABLE 4
/* 128 + the signal's number: interrupted (SIGINT, SIGTERM). Commands that run
 * ranks or steps stop them and return it; the others (report) die of the
 * signal, which the shell reports as the same number. */
#define EXIT_SIGNALLED 128

#endif
