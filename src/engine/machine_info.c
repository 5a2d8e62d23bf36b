/* Gathering machine facts from /proc, sysfs and libc; libraries by dlopen so a
 * build without CUDA still says whether CUDA is on this machine. */
#include "engine/machine_info.h"

#include <sched.h>

#include <arpa/inet.h>
#include <ctype.h>
#include <dirent.h>
#include <dlfcn.h>
#include <ifaddrs.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statvfs.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "coll_tool.h"
#include "core/cuda_rt.h"
#include "engine/host_label.h"

static void trim(char *s)
{
    size_t n = strlen(s);
    while (n > 0 && isspace((unsigned char)s[n - 1])) s[--n] = '\0';
    size_t lead = strspn(s, " \t");
    if (lead) memmove(s, s + lead, strlen(s + lead) + 1);
}

/* First line of a small file, trimmed; 0 on success. */
static int read_line(const char *path, char *out, size_t len)
{
    FILE *f = fopen(path, "r");
    if (!f) return -1;
    int ok = fgets(out, (int)len, f) != NULL;
    fclose(f);
    if (!ok) return -1;
    trim(out);
    return 0;
}

static void gather_cpu(machine_info *mi)
{
    char line[512];
    FILE *f = fopen("/proc/cpuinfo", "r");
    snprintf(mi->cpu_model, sizeof mi->cpu_model, "unknown");
    if (f) {
        /* x86: "model name"; arm64 kernels may only have "Processor" or "CPU part" */
        while (fgets(line, sizeof line, f)) {
            char *colon = strchr(line, ':');
            if (!colon) continue;
            if (strncmp(line, "model name", 10) == 0 || strncmp(line, "Processor", 9) == 0) {
                snprintf(mi->cpu_model, sizeof mi->cpu_model, "%s", colon + 1);
                trim(mi->cpu_model);
                break;
            }
        }
        fclose(f);
    }
    mi->logical_cores = sysconf(_SC_NPROCESSORS_ONLN);
    mi->configured_cores = sysconf(_SC_NPROCESSORS_CONF);
}

static void gather_numa(machine_info *mi)
{
    DIR *d = opendir("/sys/devices/system/node");
    mi->numa_nodes = -1;
    if (!d) return;
    mi->numa_nodes = 0;
    for (struct dirent *e; (e = readdir(d));)
        if (strncmp(e->d_name, "node", 4) == 0 && isdigit((unsigned char)e->d_name[4]))
            mi->numa_nodes++;
    closedir(d);
}

/* sysfs writes cache sizes as "32K", "1024K", "32M". */
static long long parse_size(const char *s)
{
    char *end;
    long long v = strtoll(s, &end, 10);
    if (end == s || v < 0) return -1;
    switch (toupper((unsigned char)*end)) {
    case 'K': return v << 10;
    case 'M': return v << 20;
    case 'G': return v << 30;
    default: return v;
    }
}

static void gather_caches(machine_info *mi)
{
    char path[128], val[64];
    mi->ncaches = 0;
    for (int i = 0; i < 16 && mi->ncaches < MACHINE_MAX_CACHES; i++) {
        machine_cache *c = &mi->caches[mi->ncaches];
        snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/level", i);
        if (read_line(path, val, sizeof val) != 0) break;
        c->level = atoi(val);
        snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/type", i);
        if (read_line(path, c->type, sizeof c->type) != 0) snprintf(c->type, sizeof c->type, "?");
        snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/size", i);
        c->size_bytes = read_line(path, val, sizeof val) == 0 ? parse_size(val) : -1;
        mi->ncaches++;
    }
}

static void gather_memory(machine_info *mi)
{
    char line[256];
    long long kb;
    mi->mem_total = mi->mem_available = -1;
    FILE *f = fopen("/proc/meminfo", "r");
    if (!f) return;
    while (fgets(line, sizeof line, f)) {
        if (sscanf(line, "MemTotal: %lld kB", &kb) == 1) mi->mem_total = kb * 1024;
        else if (sscanf(line, "MemAvailable: %lld kB", &kb) == 1) mi->mem_available = kb * 1024;
    }
    fclose(f);
}

static void gather_shm(machine_info *mi)
{
    struct statvfs st;
    mi->shm_size = mi->shm_free = -1;
    mi->shm_error[0] = '\0';
    if (statvfs("/dev/shm", &st) != 0) {
        snprintf(mi->shm_error, sizeof mi->shm_error, "statvfs /dev/shm failed");
        return;
    }
    mi->shm_size = (long long)st.f_blocks * (long long)st.f_frsize;
    mi->shm_free = (long long)st.f_bavail * (long long)st.f_frsize;
}

static void gather_ifaces(machine_info *mi)
{
    struct ifaddrs *all;
    mi->nifaces = 0;
    if (getifaddrs(&all) != 0) return;
    for (struct ifaddrs *a = all; a && mi->nifaces < MACHINE_MAX_IFACES; a = a->ifa_next) {
        int fam = a->ifa_addr ? a->ifa_addr->sa_family : AF_UNSPEC;
        const void *in = NULL;
        if (fam == AF_INET) in = &((const struct sockaddr_in *)(const void *)a->ifa_addr)->sin_addr;
        if (fam == AF_INET6) {
            const struct in6_addr *a6 =
                &((const struct sockaddr_in6 *)(const void *)a->ifa_addr)->sin6_addr;
            if (!IN6_IS_ADDR_LINKLOCAL(a6)) in = a6; /* fe80:: is on every link, reaches no host */
        }
        if (!in) continue;
        machine_iface *m = &mi->ifaces[mi->nifaces++];
        snprintf(m->name, sizeof m->name, "%s", a->ifa_name);
        m->ipv6 = fam == AF_INET6;
        if (!inet_ntop(fam, in, m->addr, sizeof m->addr)) snprintf(m->addr, sizeof m->addr, "?");
    }
    freeifaddrs(all);
}

static void gather_system(machine_info *mi)
{
    struct utsname u;
    char why[160];
    (void)bench_host_label(mi->hostname, sizeof mi->hostname, why,
                           sizeof why); /* checked at launch */
    if (uname(&u) == 0)
        snprintf(mi->kernel, sizeof mi->kernel, "%s %s %s %s", u.sysname, u.release, u.version,
                 u.machine);
    else snprintf(mi->kernel, sizeof mi->kernel, "unknown");
}

/* Compiler and build type of this binary, from the compiler's own macros (the
 * build may also pass COLL_BUILD_TYPE). */
static void gather_build(machine_info *mi)
{
#if defined(__clang__)
    snprintf(mi->compiler, sizeof mi->compiler, "clang %s", __clang_version__);
#elif defined(__GNUC__)
    snprintf(mi->compiler, sizeof mi->compiler, "gcc %s", __VERSION__);
#else
    snprintf(mi->compiler, sizeof mi->compiler, "unknown C compiler");
#endif
    trim(mi->compiler);
#if defined(COLL_BUILD_TYPE)
    snprintf(mi->build_type, sizeof mi->build_type, "%s", COLL_BUILD_TYPE);
#else
    const char *opt = "unoptimized", *dbg = "", *san = "";
#if defined(__OPTIMIZE__)
    opt = "optimized";
#endif
#if !defined(NDEBUG)
    dbg = ", assertions on";
#endif
#if defined(__SANITIZE_ADDRESS__)
    san = ", address sanitizer";
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
    san = ", address sanitizer";
#elif __has_feature(thread_sanitizer)
    san = ", thread sanitizer";
#endif
#endif
#if defined(__SANITIZE_THREAD__)
    san = ", thread sanitizer";
#endif
    snprintf(mi->build_type, sizeof mi->build_type, "%s%s%s", opt, dbg, san);
#endif
#if defined(COLL_HAVE_MPI)
    snprintf(mi->mpi, sizeof mi->mpi, "built with MPI");
#else
    snprintf(mi->mpi, sizeof mi->mpi, "not built with MPI");
#endif
}

/* The CUDA runtime and NCCL through the loaders the nccl backend uses
 * (core/cuda_rt.h, coll_nccl_version): the same sonames, COLL_CUDART_PATH and
 * COLL_NCCL_PATH, and the same messages. */
static void gather_cuda(machine_info *mi)
{
    machine_dylib *lib = &mi->cuda;
    char err[512];
    int n = 0;
    memset(lib, 0, sizeof *lib);
    lib->devices = -1;
    snprintf(mi->cuda_driver, sizeof mi->cuda_driver, "unknown");
    const coll__cudart *rt = coll__cudart_load(err, sizeof err);
    if (!rt) {
        snprintf(lib->soname, sizeof lib->soname, "libcudart.so");
        snprintf(lib->detail, sizeof lib->detail, "%.255s", err);
        return;
    }
    lib->loadable = 1;
    snprintf(lib->soname, sizeof lib->soname, "%.63s", rt->soname);
    coll__cuda_version_string(rt->runtime_version, lib->version, sizeof lib->version);
    int driver = 0;
    if (rt->DriverGetVersion(&driver) != 0) driver = 0;
    coll__cuda_version_string(driver, mi->cuda_driver, sizeof mi->cuda_driver);
    if (coll__cuda_device_count(&n, err, sizeof err) != 0) {
        lib->devices = 0;
        snprintf(lib->detail, sizeof lib->detail, "%.255s", err);
        return;
    }
    lib->devices = n;
    for (int i = 0; i < n && mi->ngpus < MACHINE_MAX_GPUS; i++, mi->ngpus++)
        coll__cuda_device_name(i, mi->gpus[i].name, sizeof mi->gpus[i].name,
                               &mi->gpus[i].mem_bytes);
}

static void gather_nccl(machine_dylib *lib)
{
    char err[512];
    memset(lib, 0, sizeof *lib);
    lib->devices = -1;
    char soname[256];
    if (!coll_nccl_version(lib->version, sizeof lib->version, soname, sizeof soname, err,
                           sizeof err)) {
        snprintf(lib->soname, sizeof lib->soname, "libnccl.so.2");
        snprintf(lib->detail, sizeof lib->detail, "%.255s", err);
        return;
    }
    lib->loadable = 1;
    snprintf(lib->soname, sizeof lib->soname, "%.63s", soname);
}

static void gather_backends(machine_info *mi)
{
    mi->nbackends = 0;
    for (const char *const *b = coll_backend_names(); *b && mi->nbackends < MACHINE_MAX_BACKENDS;
         b++) {
        machine_backend *m = &mi->backends[mi->nbackends++];
        m->name = *b;
        m->reason[0] = '\0';
        /* the name is shown already: the reason without "backend X unavailable: " */
        m->available = coll_backend_available_bare(*b, m->reason, sizeof m->reason);
    }
}

void bench_machine_info_gather(machine_info *mi)
{
    memset(mi, 0, sizeof *mi);
    gather_system(mi);
    gather_cpu(mi);
    gather_numa(mi);
    gather_caches(mi);
    gather_memory(mi);
    gather_shm(mi);
    gather_ifaces(mi);
    gather_build(mi);
    gather_cuda(mi);
    gather_nccl(&mi->nccl);
    gather_backends(mi);
}

int bench_machine_usable_cores(void)
{
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 0) return CPU_COUNT(&set);
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 && n < 1 << 20 ? (int)n : 1;
}
