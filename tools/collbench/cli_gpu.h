/* --device cuda in the collective commands: refuse it cleanly without CUDA,
 * add nccl to a default sweep, skip what the GPUs cannot run, and give each
 * rank its GPU (local rank % GPUs). */
#ifndef COLLBENCH_CLI_GPU_H
#define COLLBENCH_CLI_GPU_H

#include <stddef.h>

/* Launcher, before anything runs: with --device cuda, the GPUs here (*ngpus),
 * else EXIT_UNAVAILABLE with why (library, driver, device missing); --backend
 * nccl without --device cuda is EXIT_USAGE. 0 when fine. Messages are printed. */
int cli_gpu_check_launch(const char *prefix, const char *device, char *const *asked, size_t nasked,
                         int *ngpus);

/* With --device cuda and no --backend: nccl joins the sweep when available. */
void cli_gpu_default_backends(const char *device, size_t nasked, const char **out, size_t cap,
                              size_t *n);

/* Launcher, per backend x process count: 1 when that configuration is skipped
 * (nccl with more ranks than GPUs; a note says so), else 0 (a note says when
 * staged ranks share GPUs). */
int cli_gpu_skip(const char *prefix, const char *what, const char *device, const char *backend,
                 int nprocs, int ngpus, int quiet);

/* A rank with --device cuda: make its GPU current. 0, or EXIT_UNAVAILABLE with
 * the reason printed. */
int cli_gpu_rank_setup(const char *prefix, const char *device, int rank, int local_rank);

/* collbench check: one "INFO  cuda: ..." and one "INFO  nccl: ..." line (versions,
 * devices, or why not). */
void cli_gpu_check_report(void);
/* collbench check: the ranks to check backend with: nccl gets at most one per
 * GPU (a NOTE line says so), others nprocs. */
int cli_gpu_check_nprocs(const char *backend, int nprocs);

#endif
