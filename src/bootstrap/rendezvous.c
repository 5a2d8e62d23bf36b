/* Rendezvous: rank and world from the config or the launcher's environment, and
 * the store for the init method, shared by the communicators made on it (keys
 * are namespaced per creation) and counted: a tcp:// or file:// store closes
 * with the last communicator that holds it, so a program may make and destroy
 * any number of groups (torch's new_group: a tcp:// store on a fresh port
 * each). env:// is the launcher's one method per process and lives as long as
 * the process: its listening socket is handed to rank 0 once, and a rank that
 * re-creates a communicator at once must find the same server. */
#include "bootstrap/rendezvous.h"
#include "coll_tool.h"
#include "bootstrap/launch_env.h"
#include "bootstrap/listen_addr.h"
#include "bootstrap/slurm_env.h"
#ifdef COLL_HAVE_MPI
#include "bootstrap/rendezvous_mpi.h"
#endif
#include "core/fault.h"
#include "core/hostport.h"
#include "core/token.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct cached_store {
    struct cached_store *next;
    char key[320];
    coll__store *store;
    unsigned created; /* communicators made on it so far: their key prefix */
    unsigned refs;    /* communicators holding it now */
} cached_store;

static pthread_mutex_t cache_lock = PTHREAD_MUTEX_INITIALIZER;
static cached_store *cache;

static int env_int(const char *name, int dflt)
{
    const char *v = getenv(name);
    char *end;
    if (!v || !*v) return dflt;
    long x = strtol(v, &end, 10);
    return (*end || x < 0 || x > 65535) ? -2 : (int)x;
}

/* torchrun's agent already serves torch's own store on MASTER_PORT (its
 * workers get TORCHELASTIC_USE_AGENT_STORE=True); ours then listens on the
 * next port. $COLL_STORE_PORT, when set, is the port in every case. */
static int torchrun_holds_master_port(void)
{
    const char *v = getenv("TORCHELASTIC_USE_AGENT_STORE");
    return v && strcmp(v, "True") == 0 && !getenv("COLL_STORE_PORT");
}

/* env://'s store port, or -1 with err saying why there is none. Under srun
 * with neither variable set, the port comes from the job and step ids
 * (slurm_env.h), so `srun collbench ...` works as typed. */
static int env_store_port(coll__err *err)
{
    const char *var = getenv("COLL_STORE_PORT") ? "COLL_STORE_PORT" : "MASTER_PORT";
    coll_launch_env env;
    if (!getenv(var) && coll_launch_env_detect(&env) && strcmp(env.source, "srun") == 0 &&
        coll__slurm_store_port() > 0)
        return coll__slurm_store_port();
    int port = env_int(var, -1);
    if (port == 0) port = -2; /* rank 0 would bind a random port the others never learn */
    if (port >= 0 && torchrun_holds_master_port()) port = port < 65535 ? port + 1 : -2;
    if (port >= 0) return port;
    coll__err_set(err, 0, "env:// needs %s (a port number) in the environment%s", var,
                  port == -2 ? ": its value is not a port" : "");
    return -1;
}

static int open_store(const char *method, const coll__rendezvous *rv, coll__store **out,
                      coll__err *err)
{
    if (rv->world_size == 1 && strcmp(method, "env://") == 0 && !getenv("MASTER_PORT"))
        return coll__mem_store_create(rv->timeout_s, out);
    if (strncmp(method, "file://", 7) == 0)
        return coll__file_store_create(method + 7, rv->timeout_s, out, err);

    char host[256];
    int port;
    if (strcmp(method, "env://") == 0) {
        const char *addr = rv->store_host[0] ? rv->store_host : NULL;
        snprintf(host, sizeof host, "%s", addr ? addr : "127.0.0.1");
        if ((port = env_store_port(err)) < 0) return COLL_EINVAL;
    } else if (strncmp(method, "tcp://", 6) == 0) {
        char why[COLL_HOSTPORT_MAX + 100];
        if (coll__hostport_parse(method + 6, host, sizeof host, &port, why, sizeof why)) {
            return coll__err_set(err, COLL_EINVAL,
                                 "bad init method '%s': expected tcp://host:port or "
                                 "tcp://[ipv6]:port: %s",
                                 method, why);
        }
    } else {
        return coll__err_set(err, COLL_EINVAL,
                             "unknown init method '%s' (env://, tcp://host:port, file:///path)",
                             method);
    }
    /* Our launcher hands rank 0 the listening socket of MASTER_PORT, so the port is
     * never raced for. It is env://'s port: tcp:// names its own, which rank 0 binds. */
    int listen_fd = rv->rank == 0 && strcmp(method, "env://") == 0 ? env_int("COLL_STORE_FD", -1)
                                                                   : -1;
    if (listen_fd >= 0) unsetenv("COLL_STORE_FD"); /* used once */
    int rc = coll__tcp_store_create(host, port, rv->rank == 0, listen_fd, rv->token, rv->timeout_s,
                                    out, err);
    if (rc && rv->rank == 0 && strcmp(method, "env://") == 0 && strstr(err->msg, "in use")) {
        coll__err_append(err, " (%s; set COLL_STORE_PORT to a free port, the same on every rank)",
                         torchrun_holds_master_port()
                             ? "torchrun's agent holds MASTER_PORT, ours is the next one"
                         : getenv("MASTER_PORT") || getenv("COLL_STORE_PORT")
                             ? "the store listens on MASTER_PORT"
                             : "the store's port comes from SLURM_JOB_ID and SLURM_STEP_ID");
    }
    if (rc && rv->rank > 0 && rc != COLL_EINVAL) {
        /* Name the rank that hosts the store: it is the one to look at. */
        char hp[COLL_HOSTPORT_MAX];
        coll__hostport_format(hp, sizeof hp, host, port);
        coll__err_prefix(err, "cannot reach the TCP store of rank 0 at %s", hp);
    }
    return rc;
}

/* The store host of method into rv->store_host ("" when none names one), then
 * the address this rank's transports listen on (listen_addr.h). */
static int pick_listen_addr(const char *method, const coll_launch_env *env, coll__rendezvous *rv,
                            coll__err *err)
{
    int port;
    char why[400];
    const char *named = env ? coll__launch_env_store_host(env) : getenv("MASTER_ADDR");
    if (strcmp(method, "env://") == 0 && named)
        coll__host_unbracket(named, rv->store_host, sizeof rv->store_host); /* "[fd00::1]" too */
    else if (strncmp(method, "tcp://", 6) == 0 &&
             coll__hostport_parse(method + 6, rv->store_host, sizeof rv->store_host, &port, why,
                                  sizeof why) != COLL_OK)
        rv->store_host[0] = '\0'; /* open_store names the mistake */
    if (strcmp(method, "env://") == 0 && !named && rv->spans_hosts == 1) {
        return coll__err_set(err, COLL_EINVAL,
                             "the job spans hosts (%s) but MASTER_ADDR is unset: set it to the "
                             "address of rank 0's host, where the store listens",
                             env && env->source ? env->source : "launcher");
    }
    coll_listen_pick pick;
    int rc = coll__listen_addr_pick(rv->store_host, rv->spans_hosts, &pick, why, sizeof why);
    if (rc) {
        return coll__err_set(err, rc, "no address for the other ranks to reach: %s", why);
    }
    snprintf(rv->host, sizeof rv->host, "%s", pick.addr);
    return COLL_OK;
}

/* Without a token, anyone who reaches a listening port can join the job: only
 * loopback is open that way, unless the user said --insecure ($COLL_INSECURE=1). */
static int refuse_exposed(const char *method, const coll__rendezvous *rv, coll__err *err)
{
    const char *insecure = getenv("COLL_INSECURE");
    if (rv->token[0] || rv->world_size == 1 || (insecure && strcmp(insecure, "1") == 0))
        return COLL_OK;
    /* rank 0 serves env:// and tcp:// on every interface when the store host is not loopback */
    int serves = rv->rank == 0 && strncmp(method, "file://", 7) != 0 && rv->store_host[0] &&
                 !coll_host_is_loopback(rv->store_host);
    const char *what = serves                             ? "the store"
                       : !coll_host_is_loopback(rv->host) ? "the transport"
                                                          : NULL;
    if (!what) return COLL_OK;
    return coll__err_set(
        err, COLL_EINVAL,
        "%s would listen on %s, which other hosts reach, without a job token: put the same "
        "secret on every host in a file only you can read and set " COLL_ENV_JOB_TOKEN_FILE
        " to it (or " COLL_ENV_JOB_TOKEN_VAR "; collbench's launcher: --job-token-file), or "
        "accept any peer with --insecure (COLL_INSECURE=1)",
        what, serves ? rv->store_host : rv->host);
}

static int cached_open(const char *method, coll__rendezvous *rv, coll__err *err)
{
    int rc = COLL_OK;
    pthread_mutex_lock(&cache_lock);
    cached_store *slot = cache;
    while (slot && strcmp(slot->key, method) != 0) slot = slot->next;
    if (!slot && (slot = calloc(1, sizeof *slot)) == NULL) rc = COLL_ENOMEM;
    if (slot && !slot->store) {
        rc = open_store(method, rv, &slot->store, err);
        if (rc == COLL_OK) {
            snprintf(slot->key, sizeof slot->key, "%s", method);
            slot->next = cache;
            cache = slot;
        } else {
            free(slot);
            slot = NULL;
        }
    }
    if (slot) {
        rv->store = slot->store;
        slot->refs++;
        snprintf(rv->prefix, sizeof rv->prefix, "c%u/", slot->created++);
    }
    pthread_mutex_unlock(&cache_lock);
    return rc;
}

void coll__rendezvous_release(coll__store *store)
{
    if (!store) return;
    pthread_mutex_lock(&cache_lock);
    cached_store **at = &cache;
    while (*at && (*at)->store != store) at = &(*at)->next;
    cached_store *slot = *at;
    /* not cached (the MPI rendezvous' own), or env://: the process keeps it */
    if (slot && --slot->refs == 0 && strcmp(slot->key, "env://") != 0) *at = slot->next;
    else slot = NULL;
    pthread_mutex_unlock(&cache_lock);
    if (!slot) return;
    coll__store_destroy(slot->store); /* rank 0: serves the last clients, then stops */
    free(slot);
}

int coll__rendezvous_init(const coll_config *cfg, coll__rendezvous *rv, coll__err *err)
{
    memset(rv, 0, sizeof(*rv));
    rv->timeout_s = cfg->timeout_s > 0 ? cfg->timeout_s : 300.0;
    coll_launch_env env;
    int found = coll_launch_env_detect(&env);
    rv->rank = cfg->rank >= 0 ? cfg->rank : (found ? env.rank : 0);
    rv->world_size = cfg->world_size > 0 ? cfg->world_size : (found ? env.world_size : 1);
    if (rv->rank < 0 || rv->rank >= rv->world_size) {
        return coll__err_set(err, COLL_EINVAL, "rank %d is out of range for world size %d",
                             rv->rank, rv->world_size);
    }
    /* Faults are per rank, and this is where the rank becomes known. */
    int rc = coll__fault_init(rv->rank, err->msg, sizeof err->msg);
    if (rc) return rc;
    coll__fault_hit(COLL_FAULT_RENDEZVOUS, 0);
    rv->local_rank = found && env.local_rank >= 0 ? env.local_rank : rv->rank;
    rv->local_world_size = found && env.local_world_size > 0 ? env.local_world_size
                                                             : rv->world_size;

    if ((rc = coll__token_from_config(cfg->job_token, rv->token, err->msg, sizeof err->msg)))
        return rc;
    rv->spans_hosts = found ? coll__launch_env_spans_hosts(&env) : -1;

    const char *method = cfg->init_method && *cfg->init_method ? cfg->init_method : "env://";
#ifdef COLL_HAVE_MPI
    /* The listen address follows the store host, which rank 0 publishes there. */
    if (coll__rendezvous_mpi_wanted(method)) return coll__rendezvous_mpi(rv, err);
#endif
    rc = pick_listen_addr(method, found ? &env : NULL, rv, err);
    if (rc || (rc = refuse_exposed(method, rv, err))) return rc;
    int opened = cached_open(method, rv, err);
    if (opened == COLL_OK && coll__rendezvous_wants_verify(rv) &&
        (opened = coll__rendezvous_verify(rv, err)) != COLL_OK)
        coll__rendezvous_release(rv->store);
    return opened;
}
