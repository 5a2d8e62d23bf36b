/* The GPU part of `collbench info`: CUDA driver and devices, and
 * --gpu-bandwidth (device-to-device copy bandwidth, the physical reference
 * for GPU collectives). */
#ifndef COLLBENCH_INFO_GPU_H
#define COLLBENCH_INFO_GPU_H

#include <stddef.h>

#include "engine/machine_info.h"

/* "cuda driver" and one "gpu N" line per device, in print_text's format. */
void info_gpu_print_text(const machine_info *mi);

#ifdef COLL_HAVE_JANSSON
#include <jansson.h>
/* "cuda_driver" and "gpus" keys into info's JSON object. */
void info_gpu_add_json(json_t *root, const machine_info *mi);
#endif

/* --gpu-bandwidth[=SIZE]: parse SIZE (default 1G); 0 or -1 when bad. */
int info_gpu_parse_size(const char *arg, size_t *bytes);
/* Measure and print; the exit code (4 without a GPU, with the reason). */
int info_gpu_bandwidth(size_t bytes);

#endif
