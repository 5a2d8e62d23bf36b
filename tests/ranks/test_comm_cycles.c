/* Communicators made and destroyed many times in one process, as torch's
 * new_group and destroy_process_group do: `test_comm_cycles NPROCS BACKEND env
 * CYCLES`. Each cycle makes a communicator, all-reduces, and destroys it; the
 * even cycles on one tcp:// address (the store closed with its communicator
 * and opened again at once on the same port), the odd ones on a file:// store
 * of their own (a new init method every time: no cap on how many). After
 * cycle 5 each rank's descriptors and threads must stay flat (within 2). */
#include "rank_harness.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

/* A port nothing listens on now (the kernel's pick), or 0. */
static int free_port(void)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0), port = 0;
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t len = sizeof a;
    if (fd >= 0 && bind(fd, (struct sockaddr *)&a, sizeof a) == 0 &&
        getsockname(fd, (struct sockaddr *)&a, &len) == 0)
        port = ntohs(a.sin_port);
    if (fd >= 0) close(fd);
    return port;
}

static int count_dir(const char *path)
{
    DIR *d = opendir(path);
    if (!d) return -1;
    int n = 0;
    for (struct dirent *e; (e = readdir(d));) n += e->d_name[0] != '.';
    closedir(d);
    return n - 1; /* opendir's own descriptor, or nothing for the task list */
}

static int cycle(const char *backend, const char *method, int i)
{
    coll_config cfg;
    coll_config_init(&cfg);
    cfg.backend = backend;
    cfg.init_method = method;
    cfg.timeout_s = 30;
    coll_comm *comm;
    int rc = coll_comm_create(&cfg, &comm);
    if (rc) {
        fprintf(stderr, "rank %d: cycle %d (%s): coll_comm_create: %s: %s\n", rh_rank, i, method,
                coll_strerror(rc), coll_last_create_error());
        return 1;
    }
    float v[257];
    for (int k = 0; k < 257; k++) v[k] = (float)(rh_rank + 1);
    rc = coll_allreduce(comm, v, v, 257, COLL_FLOAT32, COLL_SUM);
    float want = (float)rh_size * (float)(rh_size + 1) / 2;
    int bad = rc != COLL_OK || v[0] != want || v[256] != want;
    if (bad)
        fprintf(stderr, "rank %d: cycle %d (%s): all-reduce %s, %g (want %g)\n", rh_rank, i, method,
                coll_strerror(rc), v[0], want);
    if ((rc = coll_comm_destroy(comm))) {
        fprintf(stderr, "rank %d: cycle %d: coll_comm_destroy: %s\n", rh_rank, i,
                coll_strerror(rc));
        bad = 1;
    }
    return bad;
}

int main(int argc, char **argv)
{
    coll_comm *world = rh_start(argc, argv);
    if (!world) return rh_launch_status;
    const char *backend = argc > 2 ? argv[2] : "tcp";
    int cycles = argc > 4 ? atoi(argv[4]) : 20;
    /* The world agrees on a port and a folder: rank 0's, broadcast. */
    int32_t port_dir[2] = {free_port(), (int32_t)getpid()};
    int failures = coll_broadcast(world, port_dir, port_dir, 2, COLL_INT32, 0) != COLL_OK ||
                   !port_dir[0];
    char dir[128];
    snprintf(dir, sizeof dir, "/tmp/coll_cycles.%d", (int)port_dir[1]);
    if (rh_rank == 0 && mkdir(dir, 0700) != 0) {
        perror("rank 0: mkdir");
        failures++;
    }
    failures += coll_barrier(world) != COLL_OK;

    int fds0 = 0, tasks0 = 0;
    for (int i = 0; i < cycles && !failures; i++) {
        char method[256];
        if (i % 2 == 0) snprintf(method, sizeof method, "tcp://127.0.0.1:%d", (int)port_dir[0]);
        else snprintf(method, sizeof method, "file://%s/store.%d", dir, i);
        failures += cycle(backend, method, i);
        int fds = count_dir("/proc/self/fd"), tasks = count_dir("/proc/self/task") + 1;
        if (i == 5) {
            fds0 = fds;
            tasks0 = tasks;
        } else if (i > 5 && (abs(fds - fds0) > 2 || abs(tasks - tasks0) > 2)) {
            fprintf(stderr,
                    "rank %d: after cycle %d: %d descriptors, %d threads; after cycle 5: %d, %d "
                    "(a destroyed communicator kept them)\n",
                    rh_rank, i, fds, tasks, fds0, tasks0);
            failures++;
        }
    }
    failures += coll_barrier(world) != COLL_OK;
    if (rh_rank == 0) {
        for (int i = 1; i < cycles; i += 2) {
            char path[192];
            snprintf(path, sizeof path, "%s/store.%d", dir, i);
            unlink(path);
        }
        rmdir(dir);
    }
    if (!failures && rh_rank == 0)
        printf("%d communicators made and destroyed on %s, descriptors and threads flat\n", cycles,
               backend);
    return rh_finish(world, failures);
}
