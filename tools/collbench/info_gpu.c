/* collbench info: GPUs; see info_gpu.h. */
#include "info_gpu.h"

#include <stdio.h>
#include <string.h>

#include "engine/bench_device.h"
#include "engine/sizes.h"
#include "cli_common.h"
#include "coll.h"
#include "core/cuda_rt.h"

#define BANDWIDTH_ITERS 20

void info_gpu_print_text(const machine_info *mi)
{
    if (!mi->cuda.loadable) return;
    if (strcmp(mi->cuda_driver, "none") == 0)
        printf("  %-22s none (no libcuda.so.1: the NVIDIA driver is not installed)\n",
               "cuda driver");
    else printf("  %-22s supports CUDA %s\n", "cuda driver", mi->cuda_driver);
    for (int i = 0; i < mi->ngpus; i++) {
        char name[32];
        snprintf(name, sizeof name, "gpu %d", i);
        if (mi->gpus[i].mem_bytes > 0)
            printf("  %-22s %s, %.1f GiB\n", name, mi->gpus[i].name,
                   (double)mi->gpus[i].mem_bytes / (1024.0 * 1024 * 1024));
        else printf("  %-22s %s\n", name, mi->gpus[i].name);
    }
}

#ifdef COLL_HAVE_JANSSON
void info_gpu_add_json(json_t *root, const machine_info *mi)
{
    json_t *gpus = json_array();
    if (!root || !gpus) return;
    for (int i = 0; i < mi->ngpus; i++)
        json_array_append_new(gpus, json_pack("{s:i, s:s, s:o}", "index", i, "name",
                                              mi->gpus[i].name, "memory_bytes",
                                              mi->gpus[i].mem_bytes < 0
                                                  ? json_null()
                                                  : json_integer(mi->gpus[i].mem_bytes)));
    json_object_set_new(root, "cuda_driver",
                        mi->cuda.loadable ? json_string(mi->cuda_driver) : json_null());
    json_object_set_new(root, "gpus", gpus);
}
#endif

int info_gpu_parse_size(const char *arg, size_t *bytes)
{
    uint64_t v = 1024ULL * 1024 * 1024;
    char err[128];
    if (arg && bench_parse_size(arg, &v, err, sizeof err) != 0) return -1;
    if (v == 0) return -1;
    *bytes = (size_t)v;
    return 0;
}

int info_gpu_bandwidth(size_t bytes)
{
    char why[512], name[128], human[24];
    int ngpus;
    double gbps = 0, us = 0;
    long long mem;
    if (bench_device_open("cuda", 0, &ngpus, why, sizeof why) != 0) {
        fprintf(stderr, "collbench info: --gpu-bandwidth: %s\n", why);
        return EXIT_UNAVAILABLE;
    }
    coll__cuda_device_name(0, name, sizeof name, &mem);
    bench_format_size(bytes, human, sizeof human);
    int rc = bench_device_d2d_bandwidth(bytes, BANDWIDTH_ITERS, &gbps, &us, why, sizeof why);
    if (rc == BENCH_DEVICE_OOM) {
        fprintf(stderr,
                "collbench info: --gpu-bandwidth: %s (try a smaller size: --gpu-bandwidth=256M)\n",
                why);
        return EXIT_RUNTIME;
    }
    if (rc) {
        fprintf(stderr, "collbench info: --gpu-bandwidth: %s\n", why);
        return EXIT_RUNTIME;
    }
    printf(
        "  %-22s gpu 0 (%s): device-to-device cudaMemcpy of %s: %.1f GB/s (%.1f us, best of %d)\n",
        "gpu bandwidth", name, human, gbps, us, BANDWIDTH_ITERS);
    return 0;
}
