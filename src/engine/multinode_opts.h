/* The multi-host flags (torchrun's --nnodes --node-rank --nproc-per-node
 * --master-addr --master-port, plus --listen-addr and --job-token-file), parsed and
 * checked in one place for every command that launches ranks (the collectives,
 * train). */
#ifndef BENCH_MULTINODE_OPTS_H
#define BENCH_MULTINODE_OPTS_H

#include <stdio.h>

typedef struct bench_multinode {
    int nnodes, node_rank, nproc_per_node, master_port; /* nnodes 0: one host */
    const char *master_addr, *listen_addr, *job_token;  /* point into argv */
    const char *job_token_file;                         /* read (and checked) by finish */
} bench_multinode;

/* arg ("--nnodes", "--nnodes=2") is one of these flags. */
int bench_multinode_is_flag(const char *arg);
/* flag ("--nnodes", ...) with its value: 1 when it is one of ours (stored),
 * 0 when it is not, -1 for a bad value (err names the flag). */
int bench_multinode_flag(bench_multinode *m, const char *flag, const char *value, char *err,
                         size_t errlen);
/* After all flags: companions without --nnodes, --node-rank out of range, a bad
 * token or too many ranks are errors (-1, err names the flag); defaults filled
 * in (1 rank per host, 127.0.0.1:29500). */
int bench_multinode_finish(bench_multinode *m, int max_procs, char *err, size_t errlen);
/* Only node 0 writes result files (a shared filesystem must not see two writers). */
static inline int bench_multinode_writes(const bench_multinode *m)
{
    return !(m->nnodes > 1 && m->node_rank != 0);
}
/* The flags' lines for a --help text: "  " then "    --flag ARG" padded to width. */
void bench_multinode_usage(FILE *f, int width);

#endif
