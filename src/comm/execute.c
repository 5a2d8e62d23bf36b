/* One call run now on the communicator's backend, by the caller's thread
 * (blocking calls, comm.c) or the progress thread (nonblocking, request.c):
 * both sit on this file, and it on neither. */
#include "comm/comm.h"
#include "backend/staging.h"
#include "core/clock.h"

int coll__comm_execute(coll_comm *comm, const coll__call *call, const coll__sig *sig)
{
    if (comm->failed) return comm->failed; /* errmsg still says why */
    coll__err err;
    coll__err_init(&err, NULL, 0);
    double deadline = coll__now_s() + comm->timeout_s;
    /* staging: CUDA device buffers through host memory for backends that need host memory */
    int rc = coll__staged_run(comm->backend, comm->state, comm->rank, comm->size, call, sig,
                              deadline, &err);
    if (rc) {
        err.status = rc;
        if (!err.msg[0]) coll__err_set(&err, rc, "%s", coll_strerror(rc));
        comm->err = err;
    }
    /* A refusal (a dtype, op or count this backend does not run) is reached
     * alike by every rank before anything is sent: the communicator stays
     * usable, so a sweep can skip the pair and go on. Any other failure leaves
     * peers mid-protocol: the communicator is done. Tell the peers so they fail
     * now instead of at their timeout. */
    if (rc && rc != COLL_ENOTSUP) {
        comm->failed = rc;
        coll__comm_note_blame(err.rank, rc);
        comm->backend->abort(comm->state, rc, err.rank);
    }
    return rc;
}
