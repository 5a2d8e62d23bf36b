/* The launcher: forks/execs nprocs local ranks of a program, like torchrun
 * --standalone. Rank 0 inherits the store's listening socket (COLL_STORE_FD) so
 * the port is free and known before any rank starts; a random job token
 * (COLL_JOB_TOKEN) keeps stray connections out. A rank that fails makes the
 * launcher stop the others and say which rank failed and why. */
#ifndef COLL_LAUNCHER_H
#define COLL_LAUNCHER_H

#include <stddef.h>

typedef struct coll_launch_opts {
    int nprocs;
    char *const *argv;             /* argv of each rank; argv[0] NULL-able: /proc/self/exe */
    const char *const *extra_env;  /* "NAME=VALUE" for every rank, NULL-terminated, or NULL */
    double grace_s;                /* after a failure, how long others get to exit (default 3) */
    /* Called in the launcher for each line rank 0 writes to COLL_RESULTS_FD. */
    void (*on_result_line)(const char *line, void *arg);
    void *arg;
} coll_launch_opts;

typedef struct coll_launch_result {
    int exit_code;      /* 0 when all ranks exited 0; else the first failing rank's code
                           (3 for a rank killed by a signal) */
    int failed_rank;    /* first rank that failed, or -1 */
    char message[256];  /* "rank 2 killed by signal 9 (Killed)" */
} coll_launch_result;

/* Returns COLL_OK when the launch itself worked (see res for the ranks' outcome). */
int coll_launch(const coll_launch_opts *opts, coll_launch_result *res);

#endif
