/* Nonblocking calls: a FIFO drained by one progress thread per communicator. */
#include "comm/comm.h"
#include "core/fault.h"

#include <stdlib.h>

static void *progress_main(void *arg)
{
    coll_comm *comm = arg;
    pthread_mutex_lock(&comm->lock);
    for (;;) {
        while (!comm->stopping && (!comm->queue_head || comm->busy))
            pthread_cond_wait(&comm->work, &comm->lock);
        if (!comm->queue_head) break; /* stopping and drained */
        coll_request *req = comm->queue_head;
        comm->queue_head = req->next;
        if (!comm->queue_head) comm->queue_tail = NULL;
        comm->busy = 1;
        pthread_mutex_unlock(&comm->lock);

        coll__fault_hit(COLL_FAULT_PROGRESS, 1);
        int rc = coll__comm_execute(comm, &req->call, &req->sig);

        pthread_mutex_lock(&comm->lock);
        req->status = rc;
        req->done = 1;
        comm->busy = 0;
        pthread_cond_broadcast(&comm->changed);
    }
    pthread_mutex_unlock(&comm->lock);
    return NULL;
}

int coll__comm_enqueue(coll_comm *comm, coll_request *req)
{
    pthread_mutex_lock(&comm->lock);
    if (!comm->progress_started) {
        if (pthread_create(&comm->progress_thread, NULL, progress_main, comm) != 0) {
            pthread_mutex_unlock(&comm->lock);
            return COLL_ESYS;
        }
        comm->progress_started = 1;
    }
    req->next = NULL;
    if (comm->queue_tail) comm->queue_tail->next = req;
    else comm->queue_head = req;
    comm->queue_tail = req;
    pthread_cond_signal(&comm->work);
    pthread_mutex_unlock(&comm->lock);
    return COLL_OK;
}

void coll__comm_stop_progress(coll_comm *comm)
{
    pthread_mutex_lock(&comm->lock);
    int started = comm->progress_started;
    comm->stopping = 1;
    pthread_cond_signal(&comm->work);
    pthread_mutex_unlock(&comm->lock);
    if (started) pthread_join(comm->progress_thread, NULL);
}

int coll_test(coll_request *req, int *done)
{
    if (!req || !done) return COLL_EINVAL;
    coll_comm *comm = req->comm;
    pthread_mutex_lock(&comm->lock);
    *done = req->done;
    int rc = req->done ? req->status : COLL_OK;
    pthread_mutex_unlock(&comm->lock);
    return rc;
}

int coll_wait(coll_request *req)
{
    if (!req) return COLL_EINVAL;
    coll_comm *comm = req->comm;
    pthread_mutex_lock(&comm->lock);
    while (!req->done) pthread_cond_wait(&comm->changed, &comm->lock);
    int rc = req->status;
    pthread_mutex_unlock(&comm->lock);
    free(req);
    return rc;
}
