/* A program built against the installed libcoll (include/coll.h only): one
 * all-reduce on the ranks the environment describes (env:// rendezvous). */
#include <coll.h>
#include <stdio.h>

int main(void)
{
    coll_config cfg;
    coll_config_init(&cfg); /* env://: RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT */
    coll_comm *comm = NULL;
    if (coll_comm_create(&cfg, &comm) != COLL_OK) {
        fprintf(stderr, "coll_comm_create: %s\n", coll_last_create_error());
        return 1;
    }
    int rank = coll_comm_rank(comm), size = coll_comm_size(comm);
    double v[4];
    for (int i = 0; i < 4; i++) v[i] = rank + 1 + i;
    int rc = coll_allreduce(comm, v, v, 4, COLL_FLOAT64, COLL_SUM);
    if (rc != COLL_OK) fprintf(stderr, "coll_allreduce: %s\n", coll_comm_errmsg(comm));
    int wrong = 0;
    for (int i = 0; i < 4; i++) /* sum over r of (r + 1 + i) */
        if (v[i] != size * (size + 1) / 2.0 + (double)size * i) wrong++;
    coll_comm_destroy(comm);
    if (rc != COLL_OK || wrong) {
        fprintf(stderr, "rank %d: allreduce wrong (%d elements)\n", rank, wrong);
        return 1;
    }
    printf("rank %d of %d: allreduce ok\n", rank, size);
    return 0;
}
