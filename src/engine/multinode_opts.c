#include "engine/multinode_opts.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "coll.h"
#include "core/errbuf.h"
#include "core/token.h"

static const struct {
    const char *flag, *arg, *help;
} flags[] = {
    {"--nnodes", "N", "hosts taking part; run the same command on each (torchrun's meaning)"},
    {"--node-rank", "K", "this host's index, 0..N-1 (default 0); node 0 hosts the store"},
    {"--nproc-per-node", "M", "ranks on this host (default 1); ranks K*M..K*M+M-1"},
    {"--master-addr", "ADDR", "node 0's address, reachable from every host (default 127.0.0.1)"},
    {"--master-port", "PORT", "the store's port on node 0 (default 29500)"},
    {"--listen-addr", "ADDR",
     "address this host's ranks listen on (default: the one routing to --master-addr)"},
    {"--job-token-file", "PATH",
     "shared secret of a multi-host job, first line of a file only you can read (as "
     "$COLL_JOB_TOKEN_FILE)"},
    {"--job-token", "SECRET",
     "the secret itself (visible to every user in ps: prefer --job-token-file)"},
};

int bench_multinode_is_flag(const char *arg)
{
    size_t len = strcspn(arg, "=");
    for (size_t i = 0; i < sizeof flags / sizeof flags[0]; i++)
        if (strlen(flags[i].flag) == len && strncmp(flags[i].flag, arg, len) == 0) return 1;
    return 0;
}

static int int_value(const char *flag, const char *v, long lo, long hi, int *out, char *err,
                     size_t errlen)
{
    char *end;
    errno = 0;
    long x = strtol(v, &end, 10);
    if (*v == '\0' || *end != '\0' || errno == ERANGE || x < lo || x > hi) {
        coll__set_err(err, errlen, "%s: '%s' is not a number from %ld to %ld", flag, v, lo, hi);
        return -1;
    }
    *out = (int)x;
    return 1;
}

static int text_value(const char *flag, const char *v, const char **out, char *err, size_t errlen)
{
    if (*v == '\0') {
        coll__set_err(err, errlen, "%s: empty value", flag);
        return -1;
    }
    *out = v;
    return 1;
}

int bench_multinode_flag(bench_multinode *m, const char *flag, const char *v, char *err,
                         size_t errlen)
{
    if (!strcmp(flag, "--nnodes")) return int_value(flag, v, 1, 1 << 20, &m->nnodes, err, errlen);
    if (!strcmp(flag, "--node-rank"))
        return int_value(flag, v, 0, 1 << 20, &m->node_rank, err, errlen);
    if (!strcmp(flag, "--nproc-per-node"))
        return int_value(flag, v, 1, 1 << 20, &m->nproc_per_node, err, errlen);
    if (!strcmp(flag, "--master-port"))
        return int_value(flag, v, 1, 65535, &m->master_port, err, errlen);
    if (!strcmp(flag, "--master-addr")) return text_value(flag, v, &m->master_addr, err, errlen);
    if (!strcmp(flag, "--listen-addr")) return text_value(flag, v, &m->listen_addr, err, errlen);
    if (!strcmp(flag, "--job-token")) return text_value(flag, v, &m->job_token, err, errlen);
    if (!strcmp(flag, "--job-token-file"))
        return text_value(flag, v, &m->job_token_file, err, errlen);
    return 0;
}

int bench_multinode_finish(bench_multinode *m, int max_procs, char *err, size_t errlen)
{
    if (!m->nnodes) {
        const char *f = m->node_rank        ? "--node-rank"
                        : m->nproc_per_node ? "--nproc-per-node"
                        : m->master_addr    ? "--master-addr"
                        : m->master_port    ? "--master-port"
                        : m->listen_addr    ? "--listen-addr"
                        : m->job_token      ? "--job-token"
                        : m->job_token_file ? "--job-token-file"
                                            : NULL;
        if (!f) return 0;
        coll__set_err(err, errlen, "%s: needs --nnodes (the multi-host launcher)", f);
        return -1;
    }
    if (m->node_rank >= m->nnodes) {
        coll__set_err(err, errlen, "--node-rank: %d is not below --nnodes %d", m->node_rank,
                      m->nnodes);
        return -1;
    }
    if (m->job_token && m->job_token_file) {
        coll__set_err(err, errlen, "--job-token and --job-token-file: give one");
        return -1;
    }
    if (m->job_token_file) {
        char token[COLL_TOKEN_HEX_LEN + 1], why[400];
        if (coll__token_read_file(m->job_token_file, token, why, sizeof why) != COLL_OK) {
            coll__set_err(err, errlen, "--job-token-file: %s", why);
            return -1;
        }
    }
    if (m->job_token && strlen(m->job_token) > 64) {
        coll__set_err(err, errlen, "--job-token: longer than 64 characters");
        return -1;
    }
    for (const char *t = m->job_token; t && *t; t++)
        if (*t <= ' ' || *t == 0x7f) {
            coll__set_err(err, errlen, "--job-token: only printable characters without spaces");
            return -1;
        }
    if (!m->nproc_per_node) m->nproc_per_node = 1;
    if (!m->master_addr) m->master_addr = "127.0.0.1";
    if (!m->master_port) m->master_port = 29500;
    if ((long)m->nnodes * m->nproc_per_node > max_procs) {
        coll__set_err(err, errlen, "--nproc-per-node: %d hosts x %d ranks is more than %d ranks",
                      m->nnodes, m->nproc_per_node, max_procs);
        return -1;
    }
    return 0;
}

void bench_multinode_usage(FILE *f, int width)
{
    for (size_t i = 0; i < sizeof flags / sizeof flags[0]; i++) {
        char left[48];
        snprintf(left, sizeof left, "    %s %s", flags[i].flag, flags[i].arg);
        fprintf(f, "  %-*s %s\n", width, left, flags[i].help);
    }
}
