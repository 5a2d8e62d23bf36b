#include "rank_harness.h"
#include "bootstrap/launch_env.h"
#include "bootstrap/launcher.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int rh_rank, rh_size;
int rh_launch_status;

int rh_launch(int nprocs, char **argv, const char *const *extra_env, int *failed_rank, char *msg,
              size_t msglen)
{
    coll_launch_opts o = {.nprocs = nprocs, .argv = argv, .extra_env = extra_env, .grace_s = 5};
    coll_launch_result res;
    int rc = coll_launch(&o, &res);
    if (rc) {
        snprintf(msg, msglen, "launch failed: %s", coll_strerror(rc));
        return 99;
    }
    if (failed_rank) *failed_rank = res.failed_rank;
    snprintf(msg, msglen, "%s", res.message);
    return res.exit_code;
}

coll_comm *rh_start(int argc, char **argv)
{
    coll_launch_env env;
    if (!coll_launch_env_detect(&env)) {
        int n = argc > 1 ? atoi(argv[1]) : 0;
        if (n < 1) {
            fprintf(stderr, "usage: %s NPROCS [BACKEND]\n", argv[0]);
            rh_launch_status = 2;
            return NULL;
        }
        char msg[256];
        rh_launch_status = rh_launch(n, argv, NULL, NULL, msg, sizeof msg);
        if (rh_launch_status) fprintf(stderr, "%s: %d ranks: %s\n", argv[0], n, msg);
        else printf("%s: %d ranks passed\n", argv[0], n);
        return NULL;
    }
    coll_config cfg;
    coll_config_init(&cfg);
    cfg.backend = argc > 2 ? argv[2] : "tcp";
    cfg.timeout_s = 60;
    coll_comm *comm;
    int rc = coll_comm_create(&cfg, &comm);
    if (rc) {
        fprintf(stderr, "rank %d: coll_comm_create: %s: %s\n", env.rank, coll_strerror(rc),
                coll_last_create_error());
        rh_launch_status = 3;
        return NULL;
    }
    rh_rank = coll_comm_rank(comm);
    rh_size = coll_comm_size(comm);
    return comm;
}

int rh_finish(coll_comm *comm, int failures)
{
    int rc = coll_comm_destroy(comm);
    if (rc) {
        fprintf(stderr, "rank %d: coll_comm_destroy: %s\n", rh_rank, coll_strerror(rc));
        failures++;
    }
    return failures ? 1 : 0;
}
