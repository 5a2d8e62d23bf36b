/* collbench info [--json]: this machine and this build, for bug reports and for
 * telling why a backend cannot run here. */
#include <stdio.h>
#include <string.h>

#include "engine/machine_info.h"
#include "engine/mem_copy_rate.h"
#include "engine/opt_table.h"
#include "coll_tool.h"
#include "cli_common.h"
#include "exit_codes.h"
#include "info_gpu.h"
#include "info_net.h"
#include "info_tuning.h"

#ifdef COLL_HAVE_JANSSON
#include <jansson.h>
#endif

typedef struct info_opts {
    int json, gpu_bw, tuning, markdown;
    size_t gpu_bytes;
} info_opts;

#define IO(c) ((info_opts *)(c)->user)

static int on_json(bench_opt_ctx *c, const char *v)
{
    (void)v;
    IO(c)->json = 1;
    return 0;
}
static int on_tuning(bench_opt_ctx *c, const char *v)
{
    (void)v;
    IO(c)->tuning = 1;
    return 0;
}
static int on_markdown(bench_opt_ctx *c, const char *v)
{
    (void)v;
    IO(c)->markdown = 1;
    return 0;
}
static int on_gpu_bandwidth(bench_opt_ctx *c, const char *v)
{
    IO(c)->gpu_bw = 1;
    if (info_gpu_parse_size(v, &IO(c)->gpu_bytes) != 0)
        return bench_opt_fail(c, "'%s' is not a size (1G, 256M)", v ? v : "");
    return 0;
}

static const bench_opt opt_table[] = {
    {0, "json", NULL, on_json, "one JSON object on stdout"},
    {0, "gpu-bandwidth", "[=SIZE]", on_gpu_bandwidth,
     "also time a device-to-device copy of SIZE (default 1G)\n"
     "on GPU 0: the physical reference for GPU collectives"},
    {0, "tuning", NULL, on_tuning,
     "only libcoll's tuning variables (COLL_SHM_*, ...): value in\n"
     "force, source (env or default), default, meaning"},
    {0, "markdown", NULL, on_markdown,
     "with --tuning: the table of defaults and ranges as README.md\nlists it"},
    {'h', "help", NULL, bench_opt_help, "this help"},
};

static void usage(FILE *f)
{
    fprintf(f, "usage: collbench info [--json] [--gpu-bandwidth[=SIZE]] | --tuning [--markdown]\n\n"
               "CPU, caches, NUMA nodes, memory and its single-thread copy rate, /dev/shm,\n"
               "network interfaces, kernel, build, MPI, CUDA and NCCL, and which backends\n"
               "are available (and why not).\n\n");
    bench_opt_usage(f, opt_table, BENCH_OPT_COUNT(opt_table), 26);
}

/* "1.5 GiB": sizes for people. */
static const char *human(long long bytes, char *buf, size_t len)
{
    static const char *const units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    if (bytes < 0) return snprintf(buf, len, "unknown"), buf;
    double v = (double)bytes;
    int u = 0;
    while (v >= 1024 && u < 4) v /= 1024, u++;
    snprintf(buf, len, u ? "%.1f %s" : "%.0f %s", v, units[u]);
    return buf;
}

static void print_dylib(const char *what, const machine_dylib *d)
{
    if (!d->loadable) {
        printf("  %-22s %s\n", what, d->detail);
        return;
    }
    printf("  %-22s %s loaded, version %s", what, d->soname, *d->version ? d->version : "unknown");
    if (d->devices >= 0) printf(", %d device(s)", d->devices);
    if (*d->detail) printf(" (%s)", d->detail);
    printf("\n");
}

static void print_text(const machine_info *mi, double copy_gbps, const char *copy_err)
{
    char a[32], b[32];
    printf("  %-22s %s\n", "host", mi->hostname);
    printf("  %-22s %s\n", "cpu", mi->cpu_model);
    printf("  %-22s %ld logical (%ld configured)\n", "cores", mi->logical_cores,
           mi->configured_cores);
    if (mi->numa_nodes >= 0) printf("  %-22s %d\n", "numa nodes", mi->numa_nodes);
    else printf("  %-22s unknown (no /sys/devices/system/node)\n", "numa nodes");
    for (int i = 0; i < mi->ncaches; i++) {
        char name[32];
        snprintf(name, sizeof name, "cache L%d %s", mi->caches[i].level, mi->caches[i].type);
        printf("  %-22s %s\n", name, human(mi->caches[i].size_bytes, a, sizeof a));
    }
    printf("  %-22s %s total, %s available\n", "memory", human(mi->mem_total, a, sizeof a),
           human(mi->mem_available, b, sizeof b));
    if (*mi->shm_error) printf("  %-22s %s\n", "/dev/shm", mi->shm_error);
    else
        printf("  %-22s %s size, %s free\n", "/dev/shm", human(mi->shm_size, a, sizeof a),
               human(mi->shm_free, b, sizeof b));
    for (int i = 0; i < mi->nifaces; i++) {
        char name[48];
        snprintf(name, sizeof name, "net %s", mi->ifaces[i].name);
        printf("  %-22s %s\n", name, mi->ifaces[i].addr);
    }
    if (copy_gbps > 0)
        printf("  %-22s %.1f GB/s (memcpy of 64 MiB, one thread, best of %d)\n", "memory copy rate",
               copy_gbps, MEM_COPY_REPS);
    else printf("  %-22s unknown (%s)\n", "memory copy rate", copy_err);
    printf("  %-22s %s\n", "kernel", mi->kernel);
    printf("  %-22s %s\n", "compiler", mi->compiler);
    printf("  %-22s %s\n", "build", mi->build_type);
    printf("  %-22s %s\n", "mpi", mi->mpi);
    print_dylib("cuda", &mi->cuda);
    print_dylib("nccl", &mi->nccl);
    info_gpu_print_text(mi);
    for (int i = 0; i < mi->nbackends; i++) {
        char name[48];
        snprintf(name, sizeof name, "backend %s", mi->backends[i].name);
        if (mi->backends[i].available) printf("  %-22s available\n", name);
        else printf("  %-22s unavailable: %s\n", name, mi->backends[i].reason);
    }
    char why[320];
    const char *intra = coll_auto_intra_name(why, sizeof why);
    printf("  %-22s intra-host %s (%s), inter-host tcp\n", "backend auto uses", intra, why);
    info_net_print_text();
}

#ifdef COLL_HAVE_JANSSON
/* -1 (unknown) becomes null. */
static json_t *num_or_null(long long v) { return v < 0 ? json_null() : json_integer(v); }

static json_t *dylib_json(const machine_dylib *d)
{
    return json_pack("{s:b, s:s, s:o, s:o, s:s}", "loadable", d->loadable, "library", d->soname,
                     "version", *d->version ? json_string(d->version) : json_null(), "devices",
                     num_or_null(d->devices), "detail", d->detail);
}

static json_t *to_json(const machine_info *mi, double copy_gbps)
{
    json_t *caches = json_array(), *ifaces = json_array(), *backends = json_array();
    for (int i = 0; i < mi->ncaches; i++)
        json_array_append_new(caches, json_pack("{s:i, s:s, s:o}", "level", mi->caches[i].level,
                                                "type", mi->caches[i].type, "size_bytes",
                                                num_or_null(mi->caches[i].size_bytes)));
    for (int i = 0; i < mi->nifaces; i++)
        json_array_append_new(ifaces,
                              json_pack("{s:s, s:s}", "name", mi->ifaces[i].name,
                                        mi->ifaces[i].ipv6 ? "ipv6" : "ipv4", mi->ifaces[i].addr));
    for (int i = 0; i < mi->nbackends; i++)
        json_array_append_new(backends, json_pack("{s:s, s:b, s:o}", "name", mi->backends[i].name,
                                                  "available", mi->backends[i].available, "reason",
                                                  mi->backends[i].available
                                                      ? json_null()
                                                      : json_string(mi->backends[i].reason)));
    json_t *root = json_pack(
        "{s:s, s:{s:s, s:o, s:o, s:o, s:o}, s:{s:o, s:o}, s:{s:o, s:o, s:o}, s:o, s:s,"
        " s:{s:s, s:s}, s:s, s:o, s:o, s:o}",
        "host", mi->hostname, "cpu", "model", mi->cpu_model, "logical_cores",
        num_or_null(mi->logical_cores), "configured_cores", num_or_null(mi->configured_cores),
        "numa_nodes", num_or_null(mi->numa_nodes), "caches", caches, "memory", "total_bytes",
        num_or_null(mi->mem_total), "available_bytes", num_or_null(mi->mem_available), "shm",
        "size_bytes", num_or_null(mi->shm_size), "free_bytes", num_or_null(mi->shm_free), "error",
        *mi->shm_error ? json_string(mi->shm_error) : json_null(), "network", ifaces, "kernel",
        mi->kernel, "build", "compiler", mi->compiler, "type", mi->build_type, "mpi", mi->mpi,
        "cuda", dylib_json(&mi->cuda), "nccl", dylib_json(&mi->nccl), "backends", backends);
    if (root)
        json_object_set_new(root, "memcpy_GBps",
                            copy_gbps > 0 ? json_real(copy_gbps) : json_null());
    info_gpu_add_json(root, mi);
    info_net_add_json(root);
    return root;
}
#endif

static int print_json(const machine_info *mi, double copy_gbps)
{
#ifdef COLL_HAVE_JANSSON
    json_t *root = to_json(mi, copy_gbps);
    if (!root) {
        fprintf(stderr,
                "collbench: info: cannot build the JSON object (a string that is not UTF-8?)\n");
        return EXIT_RUNTIME;
    }
    int rc = json_dumpf(root, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
    json_decref(root);
    printf("\n");
    if (rc != 0) {
        fprintf(stderr, "collbench: info: cannot write the JSON to stdout\n");
        return EXIT_RUNTIME;
    }
    return 0;
#else
    (void)mi, (void)copy_gbps;
    fprintf(stderr, "collbench: info: --json: this collbench was built without jansson "
                    "(apt-get install libjansson-dev, then rebuild)\n");
    return EXIT_UNAVAILABLE;
#endif
}

int cmd_info(int argc, char **argv)
{
    info_opts o = {0};
    int rc = cli_parse_options("collbench info", opt_table, BENCH_OPT_COUNT(opt_table), &o, NULL,
                               NULL, argc, argv);
    if (rc == BENCH_OPT_HELP) {
        usage(stdout);
        return 0;
    }
    if (rc) return rc;
    if (o.markdown && !o.tuning) {
        fprintf(stderr, "collbench info: --markdown goes with --tuning\n");
        return EXIT_USAGE;
    }
    if (o.tuning && (o.json || o.gpu_bw)) {
        fprintf(stderr, "collbench info: --tuning prints only the tuning variables: drop "
                        "--json and --gpu-bandwidth\n");
        return EXIT_USAGE;
    }
    if (o.tuning) {
        if (!o.markdown) return info_tuning_print();
        info_tuning_print_markdown();
        return 0;
    }
    machine_info mi;
    bench_machine_info_gather(&mi);
    double copy_gbps = -1;
    char copy_err[256] = "";
    if (bench_mem_copy_rate(MEM_COPY_BYTES, MEM_COPY_REPS, &copy_gbps, copy_err, sizeof copy_err) !=
        0)
        copy_gbps = -1;
    if (o.json) return print_json(&mi, copy_gbps);
    print_text(&mi, copy_gbps, copy_err);
    return o.gpu_bw ? info_gpu_bandwidth(o.gpu_bytes) : 0;
}
