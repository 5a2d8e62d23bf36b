/* What Slurm's environment says about the rendezvous when the user set nothing
 * else: the store's port from the job and step ids, its host from the step's
 * first node (rank 0 runs there under every srun task distribution). */
#ifndef COLL_SLURM_ENV_H
#define COLL_SLURM_ENV_H

#include <stddef.h>

/* Derived ports lie in [BASE, BASE + SPAN): above 1024, below Linux's
 * ephemeral range (32768-60999), so no outgoing connection holds one. */
#define COLL_SLURM_PORT_BASE 20000
#define COLL_SLURM_PORT_SPAN 12000

/* BASE + (SLURM_JOB_ID * 97 + SLURM_STEP_ID) mod SPAN (no SLURM_STEP_ID: 0):
 * steps 0..11999 of one job never share a port, nor step 0 of consecutive jobs.
 * -1 when SLURM_JOB_ID is unset or not a number. */
int coll__slurm_store_port(void);

/* The first host of a Slurm hostlist ("node[03-05,9],login" -> "node03",
 * "rack[1-2]-n[7-8]" -> "rack1-n7") into buf: 0, or -1 when list is empty
 * or malformed. */
int coll__slurm_first_host(const char *list, char *buf, size_t n);

/* The first node of $SLURM_STEP_NODELIST, else of $SLURM_JOB_NODELIST; NULL
 * when neither gives one. The string lives until the next call. */
const char *coll__slurm_first_node(void);

#endif
