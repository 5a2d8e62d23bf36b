/* Failure tests through the launcher.
 *
 *   test_failures peer_death   rank 2 of 4 dies mid-run: every other rank must fail
 *                              fast with COLL_EPEER naming rank 2, not hang
 *   test_failures MODE [BACKEND] on BACKEND (default tcp)
 *   test_failures mismatch     rank 1 of 3 passes a different count: every rank
 *                              must report COLL_EMISMATCH, none gets wrong data
 * Each surviving rank that saw the right error leaves a file "ok.<rank>" in
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

static int launch(const char *mode, const char *backend, char *self)
{
    int nprocs = strcmp(mode, "peer_death") == 0 ? 4 : 3;
    char dir[] = "/tmp/colltest.XXXXXX";
    if (!mkdtemp(dir)) return 2;
    char env_dir[600], env_mode[64], env_backend[64];
    snprintf(env_dir, sizeof env_dir, "COLLTEST_DIR=%s", dir);
    snprintf(env_mode, sizeof env_mode, "COLLTEST_MODE=%s", mode);
    snprintf(env_backend, sizeof env_backend, "COLLTEST_BACKEND=%s", backend);
    const char *env[] = {env_dir, env_mode, env_backend, NULL};
    char *argv[] = {self, NULL};
    char msg[256];
    int failed = -1;
    int code = rh_launch(nprocs, argv, env, &failed, msg, sizeof msg);
    int ok = count_ok(dir);
    char cmd[700];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", dir);

    int want_ok = strcmp(mode, "peer_death") == 0 ? nprocs - 1 : nprocs;
    int pass = ok == want_ok &&
               (strcmp(mode, "peer_death") == 0 ? code == 7 && failed == DEAD_RANK : code == 0);
    printf("%s: launcher said \"%s\" (exit %d), %d of %d ranks saw the right error: %s\n", mode,
           msg, code, ok, want_ok, pass ? "PASS" : "FAIL");
    return pass ? 0 : 1;
}

int main(int argc, char **argv)
{
    const char *mode = getenv("COLLTEST_MODE");
    if (!mode) {
        if (argc < 2) {
            fprintf(stderr, "usage: %s peer_death|mismatch [BACKEND]\n", argv[0]);
            return 2;
        }
        return launch(argv[1], argc > 2 ? argv[2] : "tcp", argv[0]);
    }
    char *backend = getenv("COLLTEST_BACKEND");
    char *rank_argv[] = {argv[0], "0", backend ? backend : "tcp", NULL};
    coll_comm *comm = rh_start(3, rank_argv);
    if (!comm) return rh_launch_status;
    int rc = strcmp(mode, "peer_death") == 0 ? rank_peer_death(comm) : rank_mismatch(comm);
    coll_comm_destroy(comm);
    return rc;
}
