/* The communicator: rank, world, backend, and the order in which calls run.
 *
 * Calls run one at a time in the order they were made. A blocking call runs on
 * the caller's thread once everything queued before it has finished; a
 * nonblocking call is queued for the progress thread (started on first use). */
#ifndef COLL_COMM_H
#define COLL_COMM_H

#include <pthread.h>
#include <stdint.h>

#include "coll.h"
#include "backend/backend.h"

struct coll_request {
    coll_request *next;
    coll_comm *comm;
    coll__call call;
    coll__sig sig;
    int done;
    int status;
};

struct coll_comm {
    int rank, size;
    const coll__backend_ops *backend;
    void *state;
    double timeout_s;
    uint32_t seq; /* collectives called so far */

    pthread_mutex_t lock;
    pthread_cond_t changed; /* busy, the queue or a request's done changed: callers' */
    pthread_cond_t work;    /* the progress thread's alone: a request it may run, or
                             * stopping (so that blocking calls never wake it) */
    coll_request *queue_head, *queue_tail;
    int busy; /* a call is running */
    int stopping;
    int progress_started;
    pthread_t progress_thread;

    struct coll__store *store; /* rendezvous store (held: coll__rendezvous_release) */
    char store_prefix[64];     /* this comm's key namespace in it */
    uint32_t monitored_seq;    /* monitored barriers called so far */

    int failed;    /* sticky status after a fatal error */
    coll__err err; /* the last failure: status, world rank blamed, why */
};

/* Run one call now (the caller has made it this comm's turn). Records errors. */
int coll__comm_execute(coll_comm *comm, const coll__call *call, const coll__sig *sig);
/* Queue a nonblocking call; starts the progress thread if needed. */
int coll__comm_enqueue(coll_comm *comm, coll_request *req);
/* Stop and join the progress thread after the queue drains. */
void coll__comm_stop_progress(coll_comm *comm);
/* A call or a set-up of this process failed with status, blaming world rank
 * world_rank (< 0: nobody): kept for coll_last_blamed_rank (coll_tool.h). */
void coll__comm_note_blame(int world_rank, int status);

#endif
