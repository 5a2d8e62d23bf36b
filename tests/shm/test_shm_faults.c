/* Failures on the shm backend, through the launcher.
 *
 *   test_shm_faults kill       rank 2 of 4 is SIGKILLed in the middle of a large
 *                              all-reduce (COLL_FAULT): every survivor must fail with
 *                              COLL_EPEER naming rank 2, not hang
 *   test_shm_faults mismatch   rank 1 of 3 passes a different count: every rank
 *                              reports COLL_EMISMATCH
 *   test_shm_faults p2p_death  rank 1 of 2 dies while rank 0 waits in a recv
 * Each survivor that saw the right error leaves "ok.<rank>" in $COLLTEST_DIR (with
 * how long it took to notice); the launcher side checks the files, the launch
 * outcome, and that /dev/shm holds no entry the run left behind. */
#include "coll.h"
#include "core/clock.h"
#include "rank_harness.h"

#include <dirent.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define DEAD_RANK 2

static void mark_ok(double took)
{
    char path[512];
    snprintf(path, sizeof path, "%s/ok.%d", getenv("COLLTEST_DIR"), rh_rank);
    FILE *f = fopen(path, "w");
    if (f) {
        fprintf(f, "%.3f\n", took);
        fclose(f);
    }
}

static int count_ok(const char *dir, double *slowest)
{
    int n = 0;
    *slowest = 0;
    DIR *d = opendir(dir);
    for (struct dirent *e; d && (e = readdir(d));) {
        if (strncmp(e->d_name, "ok.", 3) != 0) continue;
        char path[600];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        FILE *f = fopen(path, "r");
        double t = 0;
        if (f && fscanf(f, "%lf", &t) == 1 && t > *slowest) *slowest = t;
        if (f) fclose(f);
        n++;
    }
    if (d) closedir(d);
    return n;
}

/* Names in /dev/shm, one per line, into buf. MPI libraries, collbench's mpirun
 * launches (collbench-mpi.*) and Python multiprocessing of other jobs on the
 * host create and remove their own there; those names are not ours to judge. */
static void list_dev_shm(char *buf, size_t len)
{
    buf[0] = '\0';
    DIR *d = opendir("/dev/shm");
    for (struct dirent *e; d && (e = readdir(d));) {
        if (e->d_name[0] == '.' || strncmp(e->d_name, "vader", 5) == 0 ||
            strncmp(e->d_name, "ompi", 4) == 0 || strncmp(e->d_name, "sem.", 4) == 0 ||
            strncmp(e->d_name, "collbench-mpi.", 14) == 0 || strncmp(e->d_name, "torch_", 6) == 0)
            continue;
        size_t used = strlen(buf);
        snprintf(buf + used, len - used, "%s\n", e->d_name);
    }
    if (d) closedir(d);
}

/* Entries of after that are not in before. */
static int new_entries(const char *before, const char *after)
{
    int n = 0;
    char copy[8192];
    snprintf(copy, sizeof copy, "%s", after);
    for (char *save, *name = strtok_r(copy, "\n", &save); name;
         name = strtok_r(NULL, "\n", &save)) {
        char line[300];
        snprintf(line, sizeof line, "%s\n", name);
        if (!strstr(before, line)) {
            fprintf(stderr, "left in /dev/shm: %s\n", name);
            n++;
        }
    }
    return n;
}

/* The fault kills rank 2 after 24 MiB of its all-reduce traffic: mid-collective.
 * In place, or out of place with SHM_FAULTS_OUT_OF_PLACE=1 (strategies differ). */
static int rank_kill(coll_comm *comm)
{
    size_t n = 4u << 20;
    const char *oop = getenv("SHM_FAULTS_OUT_OF_PLACE");
    float *buf = calloc(n, sizeof(float));
    float *out = oop && strcmp(oop, "1") == 0 ? calloc(n, sizeof(float)) : buf;
    int rc = COLL_OK;
    double t0 = coll__now_s();
    for (int i = 0; i < 40 && rc == COLL_OK; i++) {
        t0 = coll__now_s();
        rc = coll_allreduce(comm, buf, out, n, COLL_FLOAT32, COLL_SUM);
    }
    double took = coll__now_s() - t0;
    int blamed = coll_comm_failed_rank(comm);
    fprintf(stderr, "rank %d: %s after %.3f s: %s (blames rank %d)\n", rh_rank,
            coll_status_name(rc), took, coll_comm_errmsg(comm), blamed);
    if (rc == COLL_EPEER && blamed == DEAD_RANK && strstr(coll_comm_errmsg(comm), "rank 2"))
        mark_ok(took);
    if (out != buf) free(out);
    free(buf);
    return rc == COLL_OK ? 1 : 0;
}

static int rank_mismatch(coll_comm *comm)
{
    size_t n = 1000 + (rh_rank == 1 ? 300000 : 0); /* rank 1 even takes the other path */
    float *buf = calloc(n, sizeof(float));
    int rc = coll_allreduce(comm, buf, buf, n, COLL_FLOAT32, COLL_SUM);
    fprintf(stderr, "rank %d: %s: %s\n", rh_rank, coll_status_name(rc), coll_comm_errmsg(comm));
    if (rc == COLL_EMISMATCH && strstr(coll_comm_errmsg(comm), "called")) mark_ok(0);
    free(buf);
    return 0;
}

static int rank_p2p_death(coll_comm *comm)
{
    int32_t v[16] = {0};
    if (rh_rank == 1) {
        usleep(200000);
        raise(SIGKILL);
    }
    double t0 = coll__now_s();
    int rc = coll_recv(comm, v, 16, COLL_INT32, 1);
    double took = coll__now_s() - t0;
    fprintf(stderr, "rank %d: %s after %.3f s: %s\n", rh_rank, coll_status_name(rc), took,
            coll_comm_errmsg(comm));
    if (rc == COLL_EPEER && coll_comm_failed_rank(comm) == 1) mark_ok(took - 0.2);
    return 0;
}

static int launch(const char *mode, char *self)
{
    int nprocs = strcmp(mode, "kill") == 0 ? 4 : strcmp(mode, "mismatch") == 0 ? 3 : 2;
    char dir[] = "/tmp/collshmtest.XXXXXX";
    if (!mkdtemp(dir)) return 2;
    char env_dir[600], env_mode[64], before[4096], after[4096];
    snprintf(env_dir, sizeof env_dir, "COLLTEST_DIR=%s", dir);
    snprintf(env_mode, sizeof env_mode, "COLLTEST_MODE=%s", mode);
    const char *env[] = {env_dir, env_mode, "COLL_FAULT=2:collective:kill:24M", NULL};
    if (strcmp(mode, "kill") != 0) env[2] = NULL;
    char *argv[] = {self, NULL};
    char msg[256];
    int failed = -1;
    list_dev_shm(before, sizeof before);
    int code = rh_launch(nprocs, argv, env, &failed, msg, sizeof msg);
    list_dev_shm(after, sizeof after);
    double slowest;
    int ok = count_ok(dir, &slowest);
    char cmd[700];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", dir);

    int killed = strcmp(mode, "mismatch") != 0;
    int want_ok = killed ? nprocs - 1 : nprocs;
    int leaked = new_entries(before, after);
    int pass = ok == want_ok && leaked == 0 &&
               (killed ? code == 3 && failed == (nprocs == 4 ? DEAD_RANK : 1) : code == 0);
    printf("%s: launcher said \"%s\" (exit %d), %d of %d ranks saw the right error, slowest "
           "noticed after %.3f s, %d entries left in /dev/shm: %s\n",
           mode, msg, code, ok, want_ok, slowest, leaked, pass ? "PASS" : "FAIL");
    return pass ? 0 : 1;
}

int main(int argc, char **argv)
{
    const char *mode = getenv("COLLTEST_MODE");
    if (!mode) {
        if (argc < 2) {
            fprintf(stderr, "usage: %s kill|mismatch|p2p_death\n", argv[0]);
            return 2;
        }
        return launch(argv[1], argv[0]);
    }
    char *rank_argv[] = {argv[0], "0", "shm", NULL};
    coll_comm *comm = rh_start(3, rank_argv);
    if (!comm) return rh_launch_status;
    int rc = strcmp(mode, "kill") == 0       ? rank_kill(comm)
             : strcmp(mode, "mismatch") == 0 ? rank_mismatch(comm)
                                             : rank_p2p_death(comm);
    coll_comm_destroy(comm);
    return rc ? 1 : 0;
}
