/* MPI initialised once per process, finalised once at exit (see runtime_mpi.h). */
#include "bootstrap/runtime_mpi.h"
#include "core/errbuf.h"
#include "coll.h"

#include <mpi.h>
#include <pthread.h>
#include <stdlib.h>

static pthread_mutex_t init_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t call_lock = PTHREAD_MUTEX_INITIALIZER;
static int initialised; /* coll__mpi_runtime_init succeeded once */
static int we_own_it;   /* we called MPI_Init_thread, so we finalise */
static int thread_level;
static volatile int failed;

static void finalize_at_exit(void)
{
    int done = 0;
    MPI_Finalized(&done);
    /* After a failed collective peers may be stuck in it: finalising would wait
     * for them, while exiting without it makes mpirun stop the whole job. */
    if (!done && !failed) MPI_Finalize();
}

int coll__mpi_runtime_init(int *level, char *err, size_t errlen)
{
    int rc = COLL_OK;
    pthread_mutex_lock(&init_lock);
    if (!initialised) {
        int already = 0;
        MPI_Initialized(&already);
        if (already) {
            MPI_Query_thread(&thread_level);
        } else if (MPI_Init_thread(NULL, NULL, MPI_THREAD_MULTIPLE, &thread_level) != MPI_SUCCESS) {
            coll__set_err(err, errlen,
                          "MPI_Init_thread failed (is this process started by mpirun?)");
            rc = COLL_EUNAVAIL;
        } else {
            we_own_it = 1;
            if (atexit(finalize_at_exit) != 0) {
                coll__set_err(err, errlen, "atexit: cannot register MPI_Finalize");
                rc = COLL_ESYS;
            }
        }
        /* Errors come back as codes to turn into coll_status, never as aborts. */
        if (rc == COLL_OK) MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
        initialised = rc == COLL_OK;
    }
    if (level) *level = thread_level;
    pthread_mutex_unlock(&init_lock);
    return rc;
}

int coll__mpi_runtime_join(int rank, int world_size, int *level, char *err, size_t errlen)
{
    int mrank = -1, msize = -1;
    int rc = coll__mpi_runtime_init(level, err, errlen);
    if (rc) return rc;
    coll__mpi_lock();
    MPI_Comm_rank(MPI_COMM_WORLD, &mrank);
    MPI_Comm_size(MPI_COMM_WORLD, &msize);
    coll__mpi_unlock();
    if (mrank == rank && msize == world_size) return COLL_OK;
    coll__set_err(err, errlen,
                  "rank %d of %d from the config or environment does not match MPI_COMM_WORLD "
                  "(rank %d of %d): start the ranks with mpirun -np N (or srun) and leave rank "
                  "and world size unset",
                  rank, world_size, mrank, msize);
    return COLL_EINVAL;
}

void coll__mpi_runtime_mark_failed(void) { failed = 1; }

void coll__mpi_lock(void)
{
    if (thread_level < MPI_THREAD_MULTIPLE) pthread_mutex_lock(&call_lock);
}

void coll__mpi_unlock(void)
{
    if (thread_level < MPI_THREAD_MULTIPLE) pthread_mutex_unlock(&call_lock);
}

void coll__mpi_describe(int code, const char *call, char *buf, size_t len)
{
    char text[MPI_MAX_ERROR_STRING] = "";
    int n = 0, cls = 0;
    MPI_Error_string(code, text, &n);
    MPI_Error_class(code, &cls);
    coll__set_err(buf, len, "%s failed: %s (MPI error class %d)", call,
                  n > 0 ? text : "unknown error", cls);
}
