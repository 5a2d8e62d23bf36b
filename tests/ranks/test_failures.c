/* Failure tests through the launcher.
 *
 *   test_failures MODE [BACKEND] on BACKEND (default tcp):
 *   peer_death     rank 2 of 4 dies mid-run: every other rank must fail
 *                  fast with COLL_EPEER naming rank 2, not hang
 *   mismatch       rank 1 of 3 passes a different count: every rank
 *                  must report COLL_EMISMATCH, none gets wrong data
 *   any_death      rank 2 of 3 dies while rank 0 waits in coll_recv_any and
 *                  nobody sends: rank 0 fails fast with COLL_EPEER naming rank 2
 *   any_mismatch   rank 1 of 3 sends 5 elements to rank 0's coll_recv_any of 4:
 *                  rank 0 fails with COLL_EMISMATCH naming rank 1
 *   any_timeout    nobody sends to rank 0's coll_recv_any: COLL_ETIMEDOUT
 *                  after the communicator's timeout (2 s here), not later
 *   early_exit     rank 0 (the store's host) exits as soon as create returns:
 *                  ranks 1 and 2 must still finish create
 * Each rank that saw the right error leaves a file "ok.<rank>" in
 * $COLLTEST_DIR; the launcher side checks the files and the launch outcome. */
#include "coll.h"
#include "core/clock.h"
#include "rank_harness.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define DEAD_RANK 2

static void mark_ok(void)
{
    char path[512];
    snprintf(path, sizeof path, "%s/ok.%d", getenv("COLLTEST_DIR"), rh_rank);
    FILE *f = fopen(path, "w");
    if (f) fclose(f);
}

static int count_ok(const char *dir)
{
    int n = 0;
    DIR *d = opendir(dir);
    for (struct dirent *e; d && (e = readdir(d));)
        if (strncmp(e->d_name, "ok.", 3) == 0) n++;
    if (d) closedir(d);
    return n;
}

/* Rank DEAD_RANK finishes one all-reduce and exits; the others keep calling.
 * A survivor may fail already in the first call (rank 2 can be done with it
 * while a slower rank is not): what matters is the error, whom it blames, and
 * how fast it comes. */
static int rank_peer_death(coll_comm *comm)
{
    size_t n = 1 << 20;
    float *buf = calloc(n, sizeof(float));
    int rc = COLL_OK;
    double t0 = coll__now_s();
    for (int i = 0; i < 50 && rc == COLL_OK; i++) {
        rc = coll_allreduce(comm, buf, buf, n, COLL_FLOAT32, COLL_SUM);
        if (rh_rank == DEAD_RANK && rc == COLL_OK) _exit(7); /* no goodbye: like a crash */
    }
    double took = coll__now_s() - t0;
    int blamed = coll_comm_failed_rank(comm);
    fprintf(stderr, "rank %d: %s after %.2f s: %s (blames rank %d)\n", rh_rank,
            coll_status_name(rc), took, coll_comm_errmsg(comm), blamed);
    if (rc == COLL_EPEER && blamed == DEAD_RANK && took < 10) mark_ok();
    free(buf);
    return 0;
}

static int rank_mismatch(coll_comm *comm)
{
    size_t n = 1000 + (rh_rank == 1);
    float *buf = calloc(n, sizeof(float));
    int rc = coll_allreduce(comm, buf, buf, n, COLL_FLOAT32, COLL_SUM);
    fprintf(stderr, "rank %d: %s: %s\n", rh_rank, coll_status_name(rc), coll_comm_errmsg(comm));
    if (rc == COLL_EMISMATCH) mark_ok();
    free(buf);
    return 0;
}

/* Rank 2 dies a moment after rank 0 started waiting for anyone; rank 1
 * waits for rank 0, which sends nothing, until rank 0's failure reaches it. */
static int rank_any_death(coll_comm *comm)
{
    int32_t v[4];
    int src = -2, rc;
    if (rh_rank == DEAD_RANK) {
        usleep(200000);
        _exit(7);
    }
    double t0 = coll__now_s();
    if (rh_rank == 1) {
        rc = coll_recv(comm, v, 4, COLL_INT32, 0);
        fprintf(stderr, "rank 1: %s: %s\n", coll_status_name(rc), coll_comm_errmsg(comm));
        return 0;
    }
    rc = coll_recv_any(comm, v, 4, COLL_INT32, &src);
    double took = coll__now_s() - t0;
    int blamed = coll_comm_failed_rank(comm);
    fprintf(stderr, "rank 0: recv_any: %s after %.2f s, source %d: %s (blames rank %d)\n",
            coll_status_name(rc), took, src, coll_comm_errmsg(comm), blamed);
    if (rc == COLL_EPEER && blamed == DEAD_RANK && src == -1 && took < 10) mark_ok();
    return 0;
}

static int rank_any_mismatch(coll_comm *comm)
{
    int32_t v[5] = {0};
    int src = -2, rc;
    if (rh_rank == 1) rc = coll_send(comm, v, 5, COLL_INT32, 0);
    else if (rh_rank == 2) rc = coll_recv(comm, v, 4, COLL_INT32, 0); /* until rank 0 fails */
    else rc = coll_recv_any(comm, v, 4, COLL_INT32, &src);
    fprintf(stderr, "rank %d: %s, source %d: %s\n", rh_rank, coll_status_name(rc), src,
            coll_comm_errmsg(comm));
    if (rh_rank == 0 && rc == COLL_EMISMATCH && coll_comm_failed_rank(comm) == 1 && src == -1)
        mark_ok();
    return 0;
}

/* Rank 0 ends its process right after create (no destroy, as a program that
 * fails at once may), while rank 2 is slowed inside its set-up: rank 2 must
 * still finish create, so rank 0 may not leave while a peer reads set-up keys
 * from the store its process hosts. */
static int rank_early_exit(coll_comm *comm)
{
    (void)comm;
    if (rh_rank != 0) mark_ok();
    _exit(0);
}

/* Only rank 0 waits (the others sleep past its timeout), so the timeout it
 * reports is its own. */
static int rank_any_timeout(coll_comm *comm)
{
    int32_t v[4];
    int src = -2;
    if (rh_rank != 0) {
        usleep(4000000);
        return 0;
    }
    double t0 = coll__now_s();
    int rc = coll_recv_any(comm, v, 4, COLL_INT32, &src);
    double took = coll__now_s() - t0;
    fprintf(stderr, "rank 0: %s after %.2f s: %s\n", coll_status_name(rc), took,
            coll_comm_errmsg(comm));
    if (rc == COLL_ETIMEDOUT && took > 1.5 && took < 10) mark_ok();
    return 0;
}

static const struct mode {
    const char *name;
    int nprocs;
    int (*run)(coll_comm *comm);
    int dies;        /* DEAD_RANK exits with status 7 */
    int want_ok;     /* ranks that must see the right error */
    const char *env; /* more environment for the ranks */
} modes[] = {
    {"peer_death", 4, rank_peer_death, 1, 3, NULL},
    {"mismatch", 3, rank_mismatch, 0, 3, NULL},
    {"any_death", 3, rank_any_death, 1, 1, NULL},
    {"any_mismatch", 3, rank_any_mismatch, 0, 1, NULL},
    {"any_timeout", 3, rank_any_timeout, 0, 1, "RH_TIMEOUT_S=2"},
    {"early_exit", 3, rank_early_exit, 0, 2, NULL},
};

static const struct mode *find_mode(const char *name)
{
    for (size_t i = 0; i < sizeof modes / sizeof modes[0]; i++)
        if (strcmp(modes[i].name, name) == 0) return &modes[i];
    return NULL;
}

static int launch(const struct mode *m, const char *backend, char *self)
{
    char dir[] = "/tmp/colltest.XXXXXX";
    if (!mkdtemp(dir)) return 2;
    char env_dir[600], env_mode[64], env_backend[64];
    snprintf(env_dir, sizeof env_dir, "COLLTEST_DIR=%s", dir);
    snprintf(env_mode, sizeof env_mode, "COLLTEST_MODE=%s", m->name);
    snprintf(env_backend, sizeof env_backend, "COLLTEST_BACKEND=%s", backend);
    const char *env[] = {env_dir, env_mode, env_backend, m->env, NULL};
    char *argv[] = {self, NULL};
    char msg[256];
    int failed = -1;
    int code = rh_launch(m->nprocs, argv, env, &failed, msg, sizeof msg);
    int ok = count_ok(dir);
    char cmd[700];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", dir);

    int pass = ok == m->want_ok && (m->dies ? code == 7 && failed == DEAD_RANK : code == 0);
    printf("%s: launcher said \"%s\" (exit %d), %d of %d ranks saw the right error: %s\n", m->name,
           msg, code, ok, m->want_ok, pass ? "PASS" : "FAIL");
    return pass ? 0 : 1;
}

int main(int argc, char **argv)
{
    const char *name = getenv("COLLTEST_MODE");
    const struct mode *m = find_mode(name ? name : argc > 1 ? argv[1] : "");
    if (!m) {
        fprintf(stderr,
                "usage: %s peer_death|mismatch|any_death|any_mismatch|any_timeout|early_exit "
                "[BACKEND]\n",
                argv[0]);
        return 2;
    }
    if (!name) return launch(m, argc > 2 ? argv[2] : "tcp", argv[0]);
    char *backend = getenv("COLLTEST_BACKEND");
    char *rank_argv[] = {argv[0], "0", backend ? backend : "tcp", NULL};
    coll_comm *comm = rh_start(3, rank_argv);
    if (!comm) return rh_launch_status;
    int rc = m->run(comm);
    coll_comm_destroy(comm);
    return rc;
}
