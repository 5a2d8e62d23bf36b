/* --device cuda for the collective commands; see cli_gpu.h. */
#include "cli_gpu.h"

#include <stdio.h>
#include <string.h>

#include "engine/bench_device.h"
#include "cli_common.h"
#include "coll_tool.h"
#include "core/cuda_rt.h"

static int asked_for(char *const *asked, size_t nasked, const char *name)
{
    for (size_t i = 0; i < nasked; i++)
        if (strcmp(asked[i], name) == 0) return 1;
    return 0;
}

int cli_gpu_check_launch(const char *prefix, const char *device, char *const *asked, size_t nasked,
                         int *ngpus)
{
    char why[512];
    *ngpus = 0;
    if (!bench_device_is_cuda(device)) {
        /* an unavailable nccl is exit 4 with its reason (cli_plan_pick_backends) */
        if (!asked_for(asked, nasked, "nccl") || !coll_backend_available("nccl", NULL, 0)) return 0;
        fprintf(stderr, "%s: --backend nccl runs on GPU buffers: add --device cuda\n", prefix);
        return EXIT_USAGE;
    }
    if (bench_device_open(device, -1, ngpus, why, sizeof why) != 0) {
        fprintf(stderr, "%s: --device cuda: %s\n", prefix, why);
        return EXIT_UNAVAILABLE;
    }
    return 0;
}

void cli_gpu_default_backends(const char *device, size_t nasked, const char **out, size_t cap,
                              size_t *n)
{
    if (!bench_device_is_cuda(device) || nasked > 0 || *n >= cap) return;
    for (size_t i = 0; i < *n; i++)
        if (strcmp(out[i], "nccl") == 0) return;
    if (coll_backend_available("nccl", NULL, 0)) out[(*n)++] = "nccl";
}

int cli_gpu_skip(const char *prefix, const char *what, const char *device, const char *backend,
                 int nprocs, int ngpus, int quiet)
{
    (void)prefix;
    if (!bench_device_is_cuda(device) || nprocs <= ngpus) return 0;
    if (strcmp(backend, "nccl") == 0) {
        /* as the seeds do (world size capped at the GPU count): not an error */
        if (!quiet)
            printf("\n# %s nccl %d ranks: skipped: %d CUDA device%s here, NCCL needs one GPU per "
                   "rank\n",
                   what, nprocs, ngpus, ngpus == 1 ? "" : "s");
        return 1;
    }
    if (!quiet)
        printf("\n# %s %s %d ranks: %d ranks share %d CUDA device%s; %s stages device buffers "
               "through host memory\n",
               what, backend, nprocs, nprocs, ngpus, ngpus == 1 ? "" : "s", backend);
    return 0;
}

int cli_gpu_rank_setup(const char *prefix, const char *device, int rank, int local_rank)
{
    char why[512];
    if (!bench_device_is_cuda(device)) return 0;
    if (bench_device_open(device, local_rank >= 0 ? local_rank : rank, NULL, why, sizeof why) == 0)
        return 0;
    fprintf(stderr, "%s: rank %d: --device cuda: %s\n", prefix, rank, why);
    return EXIT_UNAVAILABLE;
}

void cli_gpu_check_report(void)
{
    char why[512], run[16], drv[16], name[128];
    int n = 0, driver = 0;
    const coll__cudart *rt = coll__cudart_load(why, sizeof why);
    if (!rt) {
        printf("INFO  cuda: %s\n", why);
    } else {
        if (rt->DriverGetVersion(&driver) != 0) driver = 0;
        coll__cuda_version_string(rt->runtime_version, run, sizeof run);
        coll__cuda_version_string(driver, drv, sizeof drv);
        if (coll__cuda_device_count(&n, why, sizeof why) != 0) {
            printf("INFO  cuda: runtime %s (%s), driver %s: %s\n", run, rt->soname, drv, why);
        } else {
            coll__cuda_device_name(0, name, sizeof name, NULL);
            printf("INFO  cuda: runtime %s (%s), driver %s, %d device%s (gpu 0: %s)\n", run,
                   rt->soname, drv, n, n == 1 ? "" : "s", name);
        }
    }
    char soname[256];
    if (!coll_nccl_version(run, sizeof run, soname, sizeof soname, why, sizeof why))
        printf("INFO  nccl: %s\n", why);
    else printf("INFO  nccl: %s (%s)\n", run, soname);
    fflush(stdout);
}

int cli_gpu_check_nprocs(const char *backend, int nprocs)
{
    char why[512];
    int n = 0;
    if (strcmp(backend, "nccl") != 0 || coll__cuda_device_count(&n, why, sizeof why) != 0 ||
        nprocs <= n)
        return nprocs;
    printf("NOTE  nccl: %d ranks instead of %d: NCCL needs one GPU per rank and this host has %d\n",
           n, nprocs, n);
    return n;
}
