/* Picking the address a rank listens on and publishes (listen_addr.h). */
#include "bootstrap/listen_addr.h"
#include "bootstrap/launch_env.h"
#include "coll_tool.h"
#include "core/hostport.h"

#include <arpa/inet.h>
#include <errno.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

int coll__ifname_match(const char *spec, const char *name)
{
    int exclude = spec[0] == '^';
    spec += exclude;
    int exact = spec[0] == '=';
    spec += exact;
    int hit = 0;
    while (*spec && !hit) {
        size_t n = strcspn(spec, ",");
        if (n > 0)
            hit = exact ? strlen(name) == n && strncmp(name, spec, n) == 0
                        : strncmp(name, spec, n) == 0;
        spec += n + (spec[n] == ',');
    }
    return exclude ? !hit : hit;
}

int coll_host_is_loopback(const char *host)
{
    return host && (strcmp(host, "localhost") == 0 || strncmp(host, "127.", 4) == 0 ||
                    strcmp(host, "::1") == 0 || strcmp(host, "[::1]") == 0);
}

/* Loopback of the store host's family: an IPv6 store keeps the job on IPv6. */
static const char *loopback_like(const char *store_host)
{
    return store_host && strchr(store_host, ':') ? "::1" : "127.0.0.1";
}

static int is_loopback_sa(const struct sockaddr *sa)
{
    if (sa->sa_family == AF_INET)
        return (ntohl(((const struct sockaddr_in *)(const void *)sa)->sin_addr.s_addr) >> 24) ==
               127;
    return sa->sa_family == AF_INET6 &&
           IN6_IS_ADDR_LOOPBACK(&((const struct sockaddr_in6 *)(const void *)sa)->sin6_addr);
}

/* Numeric text of an IPv4 or IPv6 socket address; 1 when written. */
static int sa_text(const struct sockaddr *sa, char *buf, size_t len)
{
    socklen_t sl = sa->sa_family == AF_INET6 ? sizeof(struct sockaddr_in6)
                                             : sizeof(struct sockaddr_in);
    return getnameinfo(sa, sl, buf, (socklen_t)len, NULL, 0, NI_NUMERICHOST) == 0;
}

/* An address peers on other hosts can use: IPv4, or IPv6 of global scope (a
 * link-local fe80:: one needs the interface named at every peer). */
static int usable_family(const struct sockaddr *sa, int family)
{
    if (sa->sa_family != family) return 0;
    if (family != AF_INET6) return 1;
    const struct in6_addr *a = &((const struct sockaddr_in6 *)(const void *)sa)->sin6_addr;
    return !IN6_IS_ADDR_LINKLOCAL(a) && !IN6_IS_ADDR_MULTICAST(a);
}

/* Container and VM bridges route nowhere useful by default (as NCCL skips them). */
static int is_bridge(const char *name)
{
    return strncmp(name, "docker", 6) == 0 || strncmp(name, "virbr", 5) == 0;
}

/* First address of family on an interface that is up: matching spec when
 * given, else the first that is neither loopback nor a bridge. 1 when found. */
static int find_iface_family(struct ifaddrs *all, const char *spec, int family,
                             coll_listen_pick *out, char *names, size_t nameslen)
{
    for (struct ifaddrs *i = all; i; i = i->ifa_next) {
        if (!i->ifa_addr || !(i->ifa_flags & IFF_UP) || !usable_family(i->ifa_addr, family))
            continue;
        if (names && !strstr(names, i->ifa_name)) {
            size_t n = strlen(names);
            snprintf(names + n, nameslen - n, "%s%s", n ? ", " : "", i->ifa_name);
        }
        int loop = (i->ifa_flags & IFF_LOOPBACK) != 0;
        int ok = spec ? coll__ifname_match(spec, i->ifa_name) && !(loop && spec[0] == '^')
                      : !loop && !is_bridge(i->ifa_name);
        if (ok && sa_text(i->ifa_addr, out->addr, sizeof out->addr)) {
            snprintf(out->ifname, sizeof out->ifname, "%s", i->ifa_name);
            return 1;
        }
    }
    return 0;
}

/* IPv4 first; an interface's global IPv6 address when none has IPv4. */
static int find_iface(const char *spec, coll_listen_pick *out, char *names, size_t nameslen)
{
    struct ifaddrs *all;
    if (names && nameslen) names[0] = '\0';
    if (getifaddrs(&all) != 0) return 0;
    int found = find_iface_family(all, spec, AF_INET, out, names, nameslen) ||
                find_iface_family(all, spec, AF_INET6, out, names, nameslen);
    freeifaddrs(all);
    return found;
}

/* The interface holding addr, for messages ("" when none does). */
static void name_iface(const char *addr, char *ifname, size_t len)
{
    struct ifaddrs *all, *i;
    char text[INET6_ADDRSTRLEN + 32], bare[INET6_ADDRSTRLEN + 32];
    ifname[0] = '\0';
    coll__host_unbracket(addr, bare, sizeof bare);
    if (getifaddrs(&all) != 0) return;
    for (i = all; i; i = i->ifa_next)
        if (i->ifa_addr &&
            (i->ifa_addr->sa_family == AF_INET || i->ifa_addr->sa_family == AF_INET6) &&
            sa_text(i->ifa_addr, text, sizeof text) && strcmp(text, bare) == 0) {
            snprintf(ifname, len, "%s", i->ifa_name);
            break;
        }
    freeifaddrs(all);
}

/* Source address of the route to host: a UDP connect sends nothing, it only asks
 * the kernel which interface it would use. */
static int route_to(const char *host, coll_listen_pick *out, char *err, size_t errlen)
{
    char bare[COLL_HOSTPORT_MAX];
    coll__host_unbracket(host, bare, sizeof bare);
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_DGRAM}, *res = NULL;
    int rc = getaddrinfo(bare, "9", &hints, &res);
    if (rc != 0) {
        snprintf(err, errlen, "cannot resolve the store host '%s': %s", host, gai_strerror(rc));
        return COLL_EINVAL;
    }
    int fd = socket(res->ai_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    struct sockaddr_storage self;
    socklen_t sl = sizeof self;
    int ok = fd >= 0 && connect(fd, res->ai_addr, res->ai_addrlen) == 0 &&
             getsockname(fd, (struct sockaddr *)&self, &sl) == 0 &&
             sa_text((struct sockaddr *)&self, out->addr, sizeof out->addr);
    int e = errno;
    if (fd >= 0) close(fd);
    freeaddrinfo(res);
    if (!ok) {
        snprintf(err, errlen,
                 "no route to the store host '%s' (MASTER_ADDR): %s; give an address this host "
                 "reaches, or set " COLL_ENV_SOCKET_IFNAME " or " COLL_ENV_LISTEN_ADDR,
                 host, strerror(e));
        return COLL_EINVAL;
    }
    name_iface(out->addr, out->ifname, sizeof out->ifname);
    return is_loopback_sa((struct sockaddr *)&self) ? 1 : COLL_OK;
}

static int only_loopback(const char *context, char *err, size_t errlen)
{
    snprintf(err, errlen,
             "the job spans hosts but %s, and this host has no other interface that is up: "
             "set " COLL_ENV_SOCKET_IFNAME
             " to the interface that reaches the other hosts, or " COLL_ENV_LISTEN_ADDR
             " to this host's address",
             context);
    return COLL_EINVAL;
}

int coll__listen_addr_pick(const char *store_host, int spans, coll_listen_pick *out, char *err,
                           size_t errlen)
{
    memset(out, 0, sizeof *out);
    const char *given = getenv(COLL_ENV_LISTEN_ADDR), *spec = getenv(COLL_ENV_SOCKET_IFNAME);
    if (given && *given) {
        coll__host_unbracket(given, out->addr, sizeof out->addr);
        name_iface(given, out->ifname, sizeof out->ifname);
        snprintf(out->why, sizeof out->why, COLL_ENV_LISTEN_ADDR " is set");
        return COLL_OK;
    }
    if (spec) {
        char names[256];
        if (!*spec || strcmp(spec, "^") == 0 || strcmp(spec, "=") == 0 || strcmp(spec, "^=") == 0) {
            snprintf(err, errlen, COLL_ENV_SOCKET_IFNAME "='%s' names no interface", spec);
            return COLL_EINVAL;
        }
        if (!find_iface(spec, out, names, sizeof names)) {
            snprintf(err, errlen,
                     COLL_ENV_SOCKET_IFNAME "=%s matches no interface that is up with an IPv4 "
                                            "or global IPv6 address (there are: %s)",
                     spec, names[0] ? names : "none");
            return COLL_EINVAL;
        }
        snprintf(out->why, sizeof out->why, COLL_ENV_SOCKET_IFNAME "=%s", spec);
        return COLL_OK;
    }
    int local = spans == 0 || (store_host && *store_host && coll_host_is_loopback(store_host));
    if (local) {
        snprintf(out->addr, sizeof out->addr, "%s", loopback_like(store_host));
        name_iface(out->addr, out->ifname, sizeof out->ifname);
        snprintf(out->why, sizeof out->why,
                 spans == 0 ? "every rank is on this host" : "the store host %s is loopback",
                 store_host);
        return COLL_OK;
    }
    if (store_host && *store_host) {
        int rc = route_to(store_host, out, err, errlen);
        if (rc == COLL_OK) {
            snprintf(out->why, sizeof out->why, "routes to the store host %s", store_host);
            return COLL_OK;
        }
        if (rc != 1) return rc;
        /* The store host is this host under a name that resolves to loopback
         * here (Debian maps the hostname to 127.0.1.1): its other interface. */
        if (!find_iface(NULL, out, NULL, 0)) {
            char ctx[300];
            snprintf(ctx, sizeof ctx, "the store host %s resolves to loopback here", store_host);
            return only_loopback(ctx, err, errlen);
        }
        snprintf(out->why, sizeof out->why,
                 "the store host %s is loopback here: first interface that is up", store_host);
        return COLL_OK;
    }
    if (spans == 1) {
        if (!find_iface(NULL, out, NULL, 0))
            return only_loopback("no store host names the network to use", err, errlen);
        snprintf(out->why, sizeof out->why, "the job spans hosts: first interface that is up");
        return COLL_OK;
    }
    snprintf(out->addr, sizeof out->addr, "%s", loopback_like(store_host));
    name_iface(out->addr, out->ifname, sizeof out->ifname);
    snprintf(out->why, sizeof out->why, "no launcher says the job spans hosts");
    return COLL_OK;
}

int coll_listen_addr_for_store(const char *store_host, coll_listen_pick *out, char *err,
                               size_t errlen)
{
    coll_launch_env env;
    int found = coll_launch_env_detect(&env);
    int spans = found ? coll__launch_env_spans_hosts(&env) : -1;
    if (!store_host || !*store_host)
        store_host = found ? coll__launch_env_store_host(&env) : getenv("MASTER_ADDR");
    return coll__listen_addr_pick(store_host, spans, out, err, errlen);
}

int coll_listen_addr_from_env(coll_listen_pick *out, char *err, size_t errlen)
{
    return coll_listen_addr_for_store(NULL, out, err, errlen);
}
