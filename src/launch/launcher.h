/* The launcher: forks/execs nprocs local ranks of a program, like torchrun
 * --standalone. Rank 0 inherits the store's listening socket (COLL_STORE_FD) so
 * the port is free and known before any rank starts; a random job token
 * (COLL_JOB_TOKEN) keeps stray connections out. A rank that fails makes the
 * launcher stop the others and say which rank failed and why.
 *
 * Every rank gets RANK, WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE (= nprocs),
 * GROUP_RANK=0, MASTER_ADDR=127.0.0.1, MASTER_PORT, COLL_JOB_TOKEN and
 * COLL_LAUNCHED=1; rank 0 alone also gets COLL_STORE_FD (the listening socket,
 * nonblocking) and COLL_RESULTS_FD (write end of a pipe read by the launcher).
 * Each rank runs in its own process group (so the launcher can stop a rank's
 * children too) and dies with SIGKILL if the launcher's thread dies. */
#ifndef COLL_LAUNCHER_H
#define COLL_LAUNCHER_H

#include <stddef.h>

/* Variables only the launcher sets, for the ranks to read. */
#define COLL_ENV_LAUNCHED "COLL_LAUNCHED"
#define COLL_ENV_JOB_TOKEN "COLL_JOB_TOKEN"
#define COLL_ENV_STORE_FD "COLL_STORE_FD"
#define COLL_ENV_RESULTS_FD "COLL_RESULTS_FD"

typedef struct coll__launch_opts {
    int nprocs;
    /* argv of each rank, NULL-terminated. argv[0] may be NULL: then the program
     * is /proc/self/exe and its arguments are argv[1] up to the next NULL (so
     * pass {NULL, NULL} for none, never {NULL}). A name without '/' is looked up
     * in PATH. */
    char *const *argv;
    /* "NAME=VALUE" for every rank, NULL-terminated, or NULL. Overrides inherited
     * variables; cannot override the launcher's own (RANK, MASTER_PORT, ...). */
    const char *const *extra_env;
    double grace_s; /* after a failure, how long others get to exit:
                                      0 = default 3 s, negative = none */
    /* Called in the launcher for each line rank 0 writes to COLL_RESULTS_FD
     * (without its '\n'; a last line without '\n' is delivered too). May be NULL. */
    void (*on_result_line)(const char *line, void *arg);
    void *arg;
    int use_self_exe; /* run /proc/self/exe even though argv[0] is set
                                      (argv[0] is then only the name the rank sees) */
    /* The ranks write COLL_DONE_MARK and their rank on COLL_RESULTS_FD when
     * they end normally (coll__launch_mark_done_at_exit): one that exits 0
     * without it left the others early, and they are stopped at once. */
    int done_marks;
} coll__launch_opts;

/* The line a rank writes on COLL_RESULTS_FD as it ends normally, then its
 * rank; the launcher keeps such lines from on_result_line. */
#define COLL_DONE_MARK "\001coll-done "
/* With the done mark, when a call of the rank failed blaming a peer
 * (coll_last_blamed_rank): this, its rank, a space and the rank it blamed
 * ("?": it timed out and cannot say for whom). A hung rank writes none; the
 * others' marks lead the launcher to it (launch_blame.h). */
#define COLL_BLAME_MARK "\001coll-blame "

/* In a rank, at start: the done mark, and the blame mark when there is one,
 * are written at exit (atexit: an _exit or a crash, or a signal, writes none).
 * Nothing when the rank has no COLL_RESULTS_FD or RANK. */
void coll__launch_mark_done_at_exit(void);

typedef struct coll__launch_result {
    int exit_code;      /* 0 when all ranks exited 0; else the failed rank's code
                           (3 for a rank killed by a signal or hung); 128+signal when
                           the launcher was interrupted (SIGINT/SIGTERM) first */
    int failed_rank;    /* the rank that caused the failure, or -1: the strongest
                           end (a signal, its own error, leaving early), else the
                           rank the others' blame marks lead to (a hung rank) */
    char message[256];  /* "rank 2 killed by signal 9 (Killed)" */
    int interrupted_by; /* SIGINT/SIGTERM the launcher received and forwarded, or 0 */
} coll__launch_result;

/* Returns COLL_OK when the launch itself worked (see res for the ranks' outcome);
 * else a negative status (bad opts, no socket, fork/exec failed) with the reason
 * in res->message, and every rank already started is stopped and reaped.
 * Not reentrant: one launch per process at a time (COLL_EINVAL otherwise).
 * While it runs, SIGCHLD, SIGINT and SIGTERM (these two unless ignored) are
 * handled by the launcher; the previous handlers are restored before it returns.
 * A second SIGINT/SIGTERM kills the ranks at once. */
int coll__launch(const coll__launch_opts *opts, coll__launch_result *res);

#endif
