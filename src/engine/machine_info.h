/* Facts about this machine and this build, for `collbench info`: what a user
 * pastes into a bug report. Gathering never fails: a fact that cannot be read
 * is left unknown (-1 or "") and says why where that helps. */
#ifndef BENCH_MACHINE_INFO_H
#define BENCH_MACHINE_INFO_H

#define MACHINE_MAX_CACHES 8
#define MACHINE_MAX_IFACES 32
#define MACHINE_MAX_BACKENDS 8

typedef struct machine_cache {
    int level;     /* 1, 2, 3 */
    char type[16]; /* "Data", "Instruction", "Unified" */
    long long size_bytes;
} machine_cache;

typedef struct machine_iface {
    char name[32];
    int ipv6;      /* addr is IPv6 (global scope; link-local ones are left out) */
    char addr[48]; /* numeric */
} machine_iface;

/* A library found with dlopen at run time (CUDA runtime, NCCL). */
typedef struct machine_dylib {
    int loadable;
    char soname[64];  /* the name that loaded, or the first tried */
    char version[32]; /* "2.19.3"; "" when unknown */
    int devices;      /* CUDA devices, -1 when unknown or not applicable */
    char detail[256]; /* why not loadable, or what went wrong asking */
} machine_dylib;

#define MACHINE_MAX_GPUS 16

typedef struct machine_gpu {
    char name[128];      /* "NVIDIA H100 80GB HBM3" */
    long long mem_bytes; /* -1 unknown */
} machine_gpu;

typedef struct machine_backend {
    const char *name;
    int available;
    char reason[256]; /* "" when available */
} machine_backend;

typedef struct machine_info {
    char hostname[256];
    char cpu_model[256];
    long logical_cores, configured_cores; /* -1 unknown */
    int numa_nodes;                       /* -1: no /sys/devices/system/node */
    machine_cache caches[MACHINE_MAX_CACHES];
    int ncaches;
    long long mem_total, mem_available; /* bytes, -1 unknown */
    long long shm_size, shm_free;       /* bytes of /dev/shm, -1 unknown */
    char shm_error[128];
    machine_iface ifaces[MACHINE_MAX_IFACES];
    int nifaces;
    char kernel[512]; /* "Linux 6.8.0 #1 SMP ... x86_64" */
    char compiler[128];
    char build_type[64];
    char mpi[128];
    machine_dylib cuda, nccl;
    machine_backend backends[MACHINE_MAX_BACKENDS];
    int nbackends;
    char cuda_driver[32];               /* "12.4" (CUDA version the driver supports), "none" */
    machine_gpu gpus[MACHINE_MAX_GPUS]; /* the first ngpus CUDA devices */
    int ngpus;
} machine_info;

void bench_machine_info_gather(machine_info *mi);

/* The cores this process may run on (its affinity mask: taskset, cpusets),
 * else the online ones: what the ranks of a one-host run share. */
int bench_machine_usable_cores(void);

#endif
