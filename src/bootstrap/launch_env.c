/* Launcher detection (see launch_env.h): which environment variables say who
 * this rank is, and whether their values make sense. */
#include "bootstrap/launch_env.h"
#include "bootstrap/slurm_env.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct env_source {
    const char *name;
    const char *rank, *world;             /* required pair */
    const char *local_rank, *local_world; /* optional, NULL when the launcher has none */
} env_source;

/* "torchrun" is renamed "collbench" when our own launcher set COLL_LAUNCHED=1. */
static const env_source sources[] = {
    {"torchrun", "RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE"},
    {"mpirun", "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_RANK",
     "OMPI_COMM_WORLD_LOCAL_SIZE"},
    {"pmi", "PMI_RANK", "PMI_SIZE", "MPI_LOCALRANKID", "MPI_LOCALNRANKS"},
    {"srun", "SLURM_PROCID", "SLURM_NTASKS", "SLURM_LOCALID", "SLURM_NTASKS_PER_NODE"},
};

static _Thread_local char last_error[256];

/* Keeps the first problem: it is usually the one the user has to fix. */
__attribute__((format(printf, 1, 2))) static void report(const char *fmt, ...)
{
    if (last_error[0]) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(last_error, sizeof last_error, fmt, ap);
    va_end(ap);
}

/* Strict decimal integer: optional sign, digits, nothing else (strtol alone
 * would accept leading blanks). */
static int parse_int(const char *s, int *out)
{
    if (!s || !(isdigit((unsigned char)s[0]) || s[0] == '-' || s[0] == '+')) return 0;
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || *end || end == s || v < INT_MIN || v > INT_MAX) return 0;
    *out = (int)v;
    return 1;
}

/* Reads name as an integer >= min; 0 when unset or (reported) invalid. */
static int read_int(const char *name, int min, int *out)
{
    const char *v = getenv(name);
    if (!v) return 0;
    if (!parse_int(v, out)) {
        report("%s=%s is not an integer", name, v);
        return 0;
    }
    if (*out < min) {
        if (min == 0) report("%s=%s is negative", name, v);
        else report("%s=%s must be at least %d", name, v, min);
        return 0;
    }
    return 1;
}

/* Reads a "rank in [0, size)" pair; both unset is silent, anything else wrong is reported. */
static int read_pair(const char *rank_name, const char *size_name, int *rank, int *size)
{
    const char *rv = getenv(rank_name), *sv = getenv(size_name);
    if (!rv && !sv) return 0;
    if (!rv || !sv) {
        report("%s=%s is set but %s is not", rv ? rank_name : size_name, rv ? rv : sv,
               rv ? size_name : rank_name);
        return 0;
    }
    if (!read_int(rank_name, 0, rank) || !read_int(size_name, 1, size)) return 0;
    if (*rank >= *size) {
        report("%s=%s is not below %s=%s", rank_name, rv, size_name, sv);
        return 0;
    }
    return 1;
}

/* SLURM_NTASKS_PER_NODE may be "2(x3)" or "4,2" on uneven allocations: only a
 * plain number tells this node's size, and anything else is not an error. */
static int plain_number(const char *s)
{
    if (!s || !*s) return 0;
    for (; *s; s++)
        if (*s < '0' || *s > '9') return 0;
    return 1;
}

static void read_local(const env_source *src, coll_launch_env *env)
{
    int lrank, lsize;
    int is_srun = strcmp(src->name, "srun") == 0;
    const char *lsize_value = getenv(src->local_world);
    if (is_srun && !plain_number(lsize_value)) {
        if (read_int(src->local_rank, 0, &lrank)) env->local_rank = lrank;
        return;
    }
    if (lsize_value && getenv(src->local_rank)) {
        if (read_pair(src->local_rank, src->local_world, &lrank, &lsize)) {
            if (lsize > env->world_size) {
                report("%s=%s is larger than the world size %s=%s", src->local_world, lsize_value,
                       src->world, getenv(src->world));
                return;
            }
            env->local_rank = lrank;
            env->local_world_size = lsize;
        }
        return;
    }
    /* Only one of the two: keep what is valid. */
    if (read_int(src->local_rank, 0, &lrank) && lrank < env->world_size) env->local_rank = lrank;
    if (read_int(src->local_world, 1, &lsize) && lsize <= env->world_size)
        env->local_world_size = lsize;
}

int coll_launch_env_detect(coll_launch_env *env)
{
    env->rank = env->world_size = env->local_rank = env->local_world_size = -1;
    env->source = NULL;
    last_error[0] = '\0';
    for (size_t i = 0; i < sizeof sources / sizeof sources[0]; i++) {
        const env_source *src = &sources[i];
        int rank, size;
        if (!read_pair(src->rank, src->world, &rank, &size)) continue;
        env->rank = rank;
        env->world_size = size;
        env->source = src->name;
        if (i == 0) {
            const char *launched = getenv("COLL_LAUNCHED");
            if (launched && strcmp(launched, "1") == 0) env->source = "collbench";
        }
        read_local(src, env);
        return 1;
    }
    return 0;
}

const char *coll_launch_env_error(void) { return last_error; }

/* A positive integer variable, or -1 when unset or not one (silently: these
 * only refine the answer). */
static int positive(const char *name)
{
    int v;
    const char *s = getenv(name);
    return s && parse_int(s, &v) && v >= 0 ? v : -1;
}

int coll__launch_env_spans_hosts(const coll_launch_env *env)
{
    int is_srun = env->source && strcmp(env->source, "srun") == 0;
    if (is_srun) {
        int nodes = positive("SLURM_STEP_NUM_NODES");
        if (nodes < 1) nodes = positive("SLURM_NNODES");
        if (nodes >= 1) return nodes > 1;
        if (positive("SLURM_NODEID") > 0) return 1;
    }
    int is_torch = env->source &&
                   (strcmp(env->source, "torchrun") == 0 || strcmp(env->source, "collbench") == 0);
    if (is_torch && positive("GROUP_RANK") > 0) return 1;
    if (env->world_size > 0 && env->local_world_size > 0)
        return env->local_world_size < env->world_size;
    return -1;
}

const char *coll__launch_env_store_host(const coll_launch_env *env)
{
    const char *m = getenv("MASTER_ADDR");
    if (m && *m) return m;
    if (!env->source || strcmp(env->source, "srun") != 0) return NULL;
    if ((m = coll__slurm_first_node())) return m;
    m = getenv("SLURM_LAUNCH_NODE_IPADDR");
    return m && *m ? m : NULL;
}
