/* Multi-host launching without MPI (cli_multinode.h). The local launcher
 * (coll__launch) numbers its ranks 0..M-1 and owns RANK/WORLD_SIZE/MASTER_*; it
 * passes the job's layout in COLLBENCH_MN_* variables, and each rank rewrites
 * its own environment from them before the library reads it. */
#include "cli_multinode.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "coll_tool.h"
#include "core/errbuf.h"
#include "core/token.h"

#define ENV_NODE "COLLBENCH_MN_NODE"   /* "K N": node rank, number of nodes */
#define ENV_ADDR "COLLBENCH_MN_ADDR"   /* master address */
#define ENV_PORT "COLLBENCH_MN_PORT"   /* master port */
#define ENV_TOKEN "COLLBENCH_MN_TOKEN" /* shared secret, or unset */

int cli_route_addr(const char *host, int port, char *buf, size_t len, char *why, size_t whylen)
{
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_DGRAM}, *res = NULL;
    char service[16];
    snprintf(service, sizeof service, "%d", port);
    int rc = getaddrinfo(host, service, &hints, &res);
    if (rc != 0) {
        coll__set_err_keep_end(why, whylen, "cannot resolve %s: %s", host, gai_strerror(rc));
        return -1;
    }
    /* A UDP connect sends nothing: it only asks the kernel which source address
     * (interface) it would use to reach host. */
    int fd = socket(res->ai_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    struct sockaddr_storage self;
    socklen_t sl = sizeof self;
    int ok = fd >= 0 && connect(fd, res->ai_addr, res->ai_addrlen) == 0 &&
             getsockname(fd, (struct sockaddr *)&self, &sl) == 0 &&
             getnameinfo((struct sockaddr *)&self, sl, buf, (socklen_t)len, NULL, 0,
                         NI_NUMERICHOST) == 0;
    int e = errno;
    if (fd >= 0) close(fd);
    freeaddrinfo(res);
    if (!ok) snprintf(why, whylen, "no route to %s:%d: %s", host, port, strerror(e));
    return ok ? 0 : -1;
}

/* --listen-addr, else $COLL_LISTEN_ADDR, else the route to the master. */
static int listen_addr(const cli_multinode *config, char *buf, size_t len, char *why, size_t whylen)
{
    const char *env = getenv("COLL_LISTEN_ADDR");
    const char *given = config->listen_addr ? config->listen_addr : env && *env ? env : NULL;
    if (given) {
        snprintf(buf, len, "%s", given);
        return 0;
    }
    return cli_route_addr(config->master_addr, config->master_port, buf, len, why, whylen);
}

/* --job-token-file, --job-token, else $COLL_JOB_TOKEN or $COLL_JOB_TOKEN_FILE;
 * NULL when none, or (why set) when the file cannot be read. */
static const char *job_token(const cli_multinode *config, char *why, size_t whylen)
{
    static char token[COLL_TOKEN_HEX_LEN + 1];
    why[0] = '\0';
    if (config->job_token_file) {
        if (coll__token_read_file(config->job_token_file, token, why, whylen)) return NULL;
        return token;
    }
    if (config->job_token) return config->job_token;
    if (coll__token_from_env(token, why, whylen)) return NULL;
    return token[0] ? token : NULL;
}

int cli_multinode_launch_one(const cli_multinode *config, const cli_launch *l, const char *backend,
                             int nprocs)
{
    char e_node[64], e_addr[300], e_port[64], e_listen[320], e_token[128], addr[256], why[300],
        what[96] = "";
    const char *token = job_token(config, why, sizeof why);
    if (why[0]) {
        fprintf(stderr, "%s: node %d: %s\n", l->prefix, config->node_rank, why);
        cli_launch_note(l, 0, why);
        return EXIT_USAGE;
    }
    if (listen_addr(config, addr, sizeof addr, why, sizeof why) != 0) {
        fprintf(stderr, "%s: node %d: --master-addr: %s\n", l->prefix, config->node_rank, why);
        cli_launch_note(l, 0, why);
        return EXIT_RUNTIME;
    }
    const char *insecure = getenv("COLL_INSECURE");
    int open_ok = insecure && strcmp(insecure, "1") == 0;
    if (!token && !open_ok && !coll_host_is_loopback(addr)) {
        fprintf(stderr,
                "%s: node %d: no job token, and the ranks would listen on %s, which other "
                "hosts reach: give every host the same secret with --job-token-file PATH "
                "(a file only you can read), or accept any peer with --insecure\n",
                l->prefix, config->node_rank, addr);
        cli_launch_note(l, 0, "no job token");
        return EXIT_USAGE;
    }
    static int warned;
    if (!token && !warned++)
        fprintf(stderr,
                coll_host_is_loopback(addr)
                    ? "%s: warning: no job token: the store on %s:%d and the ranks' connections "
                      "are unauthenticated (any user of this machine can join; give every node "
                      "--job-token-file PATH)\n"
                    : "%s: warning: --insecure: the store on %s:%d and the ranks' connections "
                      "are unauthenticated (any host that reaches them can join)\n",
                l->prefix, config->master_addr, config->master_port);
    snprintf(e_node, sizeof e_node, ENV_NODE "=%d %d", config->node_rank, config->nnodes);
    snprintf(e_addr, sizeof e_addr, ENV_ADDR "=%s", config->master_addr);
    snprintf(e_port, sizeof e_port, ENV_PORT "=%d", config->master_port);
    snprintf(e_listen, sizeof e_listen, "COLL_LISTEN_ADDR=%s", addr);
    snprintf(e_token, sizeof e_token, ENV_TOKEN "=%s", token ? token : "");
    const char *extra_env[] = {
        e_node, e_addr, e_port, e_listen, "COLL_VERIFY_RANKS=1", token ? e_token : NULL, NULL};
    if (l->what) snprintf(what, sizeof what, "%s ", l->what);
    coll__launch_result res;
    int rc = cli_exec_ranks(l, backend, nprocs, extra_env, NULL, &res);
    cli_launch_note(l, rc == 0, res.message);
    if (rc != 0) {
        fprintf(stderr, "%s: node %d: %s%s %d ranks: cannot launch: %s\n", l->prefix,
                config->node_rank, what, backend, nprocs, res.message);
        return EXIT_RUNTIME;
    }
    int first = config->node_rank * nprocs;
    if (l->report) { /* the caller says how it went */
    } else if (l->exit_wrong && res.exit_code == l->exit_wrong)
        fprintf(stderr, "%s: node %d (ranks %d-%d): %s%s: wrong results (local %s)\n", l->prefix,
                config->node_rank, first, first + nprocs - 1, what, backend, res.message);
    else if (res.exit_code != 0)
        fprintf(stderr, "%s: node %d (ranks %d-%d): %s%s failed (local %s)\n", l->prefix,
                config->node_rank, first, first + nprocs - 1, what, backend, res.message);
    if (res.interrupted_by) return EXIT_SIGNALLED + res.interrupted_by;
    return res.exit_code;
}

static void set_int(const char *name, long v)
{
    char buf[32];
    snprintf(buf, sizeof buf, "%ld", v);
    setenv(name, buf, 1);
}

void cli_multinode_rank_env(void)
{
    const char *node = getenv(ENV_NODE), *lr = getenv("LOCAL_RANK"),
               *lws = getenv("LOCAL_WORLD_SIZE");
    int k, n;
    if (!node || sscanf(node, "%d %d", &k, &n) != 2 || !lr || !lws) return;
    long local = strtol(lr, NULL, 10), m = strtol(lws, NULL, 10);
    set_int("RANK", k * m + local);
    set_int("WORLD_SIZE", n * m);
    set_int("GROUP_RANK", k);
    setenv("MASTER_ADDR", getenv(ENV_ADDR) ? getenv(ENV_ADDR) : "127.0.0.1", 1);
    setenv("MASTER_PORT", getenv(ENV_PORT) ? getenv(ENV_PORT) : "29500", 1);
    const char *token = getenv(ENV_TOKEN);
    unsetenv(COLL_ENV_JOB_TOKEN_FILE); /* read once, by the launcher: the token below is it */
    if (token && *token) setenv(COLL_ENV_JOB_TOKEN, token, 1);
    else unsetenv(COLL_ENV_JOB_TOKEN); /* the local launcher's token is not the job's */
    /* Global rank 0 binds MASTER_ADDR:MASTER_PORT itself: the local launcher's
     * 127.0.0.1 socket is of no use to other hosts. */
    const char *fd = getenv(COLL_ENV_STORE_FD);
    if (fd && *fd) {
        int f = atoi(fd);
        if (f > 2) close(f);
        unsetenv(COLL_ENV_STORE_FD);
    }
    unsetenv(ENV_NODE); /* done: a second call must not redo it */
}
