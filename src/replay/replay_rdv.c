/* The groups' meeting points, published over the world (replay_rdv.h). */
#include "replay/replay_rdv.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "coll_tool.h"

/* One led group's record in the all-gather: which group (its id's hash) and
 * which of its communicators, where. */
typedef struct rdv_record {
    uint64_t id_hash, lane;
    char method[REPLAY_METHOD_LEN];
} rdv_record;

static uint64_t fnv1a(const char *s)
{
    uint64_t h = 1469598103934665603ull;
    for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

/* A port free on host now (bound to 0, read back, closed: the group's store
 * takes it a moment later), or -1. host: an address or a name
 * ($COLL_LISTEN_ADDR may give either). */
static int free_port(const char *host)
{
    struct addrinfo hints = {.ai_socktype = SOCK_STREAM, .ai_flags = AI_NUMERICSERV}, *ai = NULL;
    if (getaddrinfo(host, "0", &hints, &ai) != 0 || !ai) return -1;
    int fd = socket(ai->ai_family, SOCK_STREAM, 0), port = -1;
    struct sockaddr_storage ss;
    socklen_t len = sizeof ss;
    if (fd >= 0 && bind(fd, ai->ai_addr, ai->ai_addrlen) == 0 &&
        getsockname(fd, (struct sockaddr *)&ss, &len) == 0)
        port = ntohs(ss.ss_family == AF_INET ? ((struct sockaddr_in *)&ss)->sin_port
                                             : ((struct sockaddr_in6 *)&ss)->sin6_port);
    if (fd >= 0) close(fd);
    freeaddrinfo(ai);
    return port;
}

/* This rank's records: one per communicator of each group it leads (group
 * rank 0), into out[0..*n). */
static int lead(const replay_trace *t, size_t lanes, rdv_record *out, size_t *n, char *err,
                size_t errlen)
{
    coll_listen_pick pick;
    *n = 0;
    for (size_t gl = 0; gl < t->ngroups * lanes; gl++) {
        size_t g = gl / lanes;
        if (t->groups[g].my_rank != 0) continue;
        if (*n == 0 && coll_listen_addr_from_env(&pick, err, errlen) != COLL_OK) return COLL_EINVAL;
        int port = free_port(pick.addr);
        if (port <= 0)
            return snprintf(err, errlen, "group \"%.60s\": no free TCP port on %s", t->groups[g].id,
                            pick.addr),
                   COLL_ESYS;
        rdv_record *r = &out[(*n)++];
        r->id_hash = fnv1a(t->groups[g].id);
        r->lane = gl % lanes;
        snprintf(r->method, sizeof r->method,
                 strchr(pick.addr, ':') ? "tcp://[%s]:%d" : "tcp://%s:%d", pick.addr, port);
    }
    return 0;
}

int replay_group_methods(const replay_trace *t, coll_comm *world, size_t lanes,
                         char (*methods)[REPLAY_METHOD_LEN], char *err, size_t errlen)
{
    if (!world)
        return snprintf(err, errlen, "groups meet over the world communicator: none given"),
               COLL_EINVAL;
    size_t nw = (size_t)coll_comm_size(world), n = 0, rec = sizeof(rdv_record);
    rdv_record *led = calloc(t->ngroups * lanes + 1, rec);
    int rc = led ? lead(t, lanes, led, &n, err, errlen)
                 : (snprintf(err, errlen, "out of memory"), COLL_ENOMEM);
    /* Both collectives run on every rank, also on one that failed above (it
     * publishes nothing): the others then fail at once, naming its groups,
     * instead of waiting for it. */
    int64_t mine = rc ? 0 : (int64_t)n, most = 0;
    int crc = coll_allreduce(world, &mine, &most, 1, COLL_INT64, COLL_MAX);
    size_t per = crc ? 0 : (size_t)most;
    rdv_record *send = calloc(per + 1, rec), *all = calloc(nw * per + 1, rec);
    if (!send || !all) crc = COLL_ENOMEM;
    else if (!rc) memcpy(send, led, n * rec);
    if (!crc && per) crc = coll_allgather(world, send, all, per * rec, COLL_UINT8);
    if (!rc && crc)
        rc = crc, snprintf(err, errlen, "publishing the groups' addresses: %s",
                           crc == COLL_ENOMEM ? "out of memory" : coll_comm_errmsg(world));
    for (size_t gl = 0; !rc && gl < t->ngroups * lanes; gl++) {
        const replay_group *grp = &t->groups[gl / lanes];
        uint64_t h = fnv1a(grp->id);
        const rdv_record *from = all + (size_t)grp->ranks[0] * per, *hit = NULL;
        for (size_t k = 0; k < per && !hit; k++)
            if (from[k].id_hash == h && from[k].lane == gl % lanes && from[k].method[0])
                hit = &from[k];
        if (hit) snprintf(methods[gl], REPLAY_METHOD_LEN, "%s", hit->method);
        else
            rc = COLL_EPROTO, snprintf(err, errlen,
                                       "group \"%.60s\": its rank 0 (world rank %d) published no "
                                       "address (it failed: see its message)",
                                       grp->id, grp->ranks[0]);
    }
    free(led), free(send), free(all);
    return rc;
}
