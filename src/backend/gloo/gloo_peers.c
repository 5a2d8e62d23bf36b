#include "backend/gloo/gloo_peers.h"
#include "coll.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>

/* Gloo's Address::str() form: "[ip]:port". */
static int format_addr(const struct sockaddr_storage *ss, char *buf, size_t len) {
  char ip[INET6_ADDRSTRLEN];
  int port;
  if (ss->ss_family == AF_INET) {
    const struct sockaddr_in *a = (const struct sockaddr_in *)ss;
    inet_ntop(AF_INET, &a->sin_addr, ip, sizeof ip);
    port = ntohs(a->sin_port);
  } else if (ss->ss_family == AF_INET6) {
    const struct sockaddr_in6 *a = (const struct sockaddr_in6 *)ss;
    inet_ntop(AF_INET6, &a->sin6_addr, ip, sizeof ip);
    port = ntohs(a->sin6_port);
  } else {
    return -1;
  }
  snprintf(buf, len, "[%s]:%d", ip, port);
  return 0;
}

/* The next of this process's descriptors (d: /proc/self/fd, may be NULL)
 * that is a socket, or -1 when none is left. */
static int next_socket(DIR *d) {
  for (struct dirent *e; d && (e = readdir(d));) {
    int fd = atoi(e->d_name);
    struct stat st;
    if (e->d_name[0] != '.' && !fstat(fd, &st) && S_ISSOCK(st.st_mode)) return fd;
  }
  return -1;
}

/* " [ip]:port ..." for every TCP socket of this process (Gloo's among them). */
static char *local_addrs(void) {
  size_t cap = 4096, len = 1;
  char *out = malloc(cap);
  DIR *d = opendir("/proc/self/fd");
  if (!out) goto done;
  strcpy(out, " ");
  for (int fd; (fd = next_socket(d)) >= 0;) {
    struct sockaddr_storage ss;
    socklen_t sl = sizeof ss;
    char a[INET6_ADDRSTRLEN + 16];
    if (getsockname(fd, (struct sockaddr *)&ss, &sl) || format_addr(&ss, a, sizeof a)) continue;
    size_t n = strlen(a) + 1;
    if (len + n + 1 > cap) {
      char *bigger = realloc(out, cap * 2);
      if (!bigger) break;
      out = bigger;
      cap *= 2;
    }
    memcpy(out + len, a, n - 1);
    len += n - 1;
    out[len++] = ' ';
    out[len] = '\0';
  }
done:
  if (d) closedir(d);
  return out;
}

static int owner(const coll__gloo_peers *p, int self, const char *ip, size_t iplen, unsigned port);

static int peer_name(int fd, char *buf, size_t len) {
  struct sockaddr_storage ss;
  socklen_t sl = sizeof ss;
  if (getpeername(fd, (struct sockaddr *)&ss, &sl)) return -1;
  return format_addr(&ss, buf, len);
}

/* This process's sockets whose other end is one of another rank's sockets. */
static void map_own_sockets(coll__gloo_peers *p, int self) {
  DIR *d = opendir("/proc/self/fd");
  for (int fd; (fd = next_socket(d)) >= 0;) {
    char a[64];
    if (peer_name(fd, a, sizeof a)) continue;
    const char *close = strstr(a, "]:");
    if (!close) continue;
    int r = owner(p, self, a + 1, (size_t)(close - a - 1), (unsigned)atoi(close + 2));
    coll__gloo_peer_fd *more = r < 0 ? NULL : realloc(p->fds, (size_t)(p->nfds + 1) * sizeof *more);
    if (!more) continue;
    p->fds = more;
    p->fds[p->nfds].fd = fd;
    p->fds[p->nfds].rank = r;
    snprintf(p->fds[p->nfds].peer, sizeof p->fds[p->nfds].peer, "%s", a);
    p->nfds++;
  }
  if (d) closedir(d);
}

int coll__gloo_peers_gone(const coll__gloo_peers *p, int *ranks, char *buf, size_t len) {
  int n = 0;
  size_t used = 0;
  buf[0] = '\0';
  for (int r = 0; r < p->size; r++) {
    int had = 0, alive = 0;
    for (int i = 0; i < p->nfds; i++) {
      const coll__gloo_peer_fd *f = &p->fds[i];
      char now[64];
      if (f->rank != r) continue;
      had = 1;
      struct pollfd pf = {.fd = f->fd, .events = POLLRDHUP};
      if (peer_name(f->fd, now, sizeof now) == 0 && strcmp(now, f->peer) == 0 &&
          poll(&pf, 1, 0) == 0)
        alive = 1; /* open, same peer, no hang-up */
    }
    if (!had || alive) continue;
    if (used < len) used += (size_t)snprintf(buf + used, len - used, "%s%d", n ? ", " : "", r);
    ranks[n++] = r;
  }
  return n;
}

int coll__gloo_peers_exchange(coll__store *store, const char *prefix, int rank, int size,
                              coll__gloo_peers *out, coll__err *err) {
  char key[128];
  out->size = size;
  out->socks = calloc((size_t)size, sizeof *out->socks);
  char *mine = local_addrs();
  if (!out->socks || !mine) {
    free(mine);
    return COLL_ENOMEM;
  }
  int rc = coll__store_key(key, sizeof key, NULL, prefix, "gloo/socks/%d", rank);
  if (!rc) rc = coll__store_set(store, key, mine, strlen(mine));
  out->socks[rank] = mine;
  for (int r = 0; r < size && rc == COLL_OK; r++) {
    if (r == rank) continue;
    size_t len;
    void *v = NULL;
    rc = coll__store_key(key, sizeof key, NULL, prefix, "gloo/socks/%d", r);
    if (!rc) rc = coll__store_get(store, key, &v, &len);
    out->socks[r] = v;
  }
  if (!rc) map_own_sockets(out, rank);
  if (rc)
    return coll__err_set(err, rc,
                         "gloo: exchanging socket addresses over the store failed: %s (%s)",
                         coll_strerror(rc), store->err.msg);
  return rc;
}

static int owner(const coll__gloo_peers *p, int self, const char *ip, size_t iplen, unsigned port) {
  char want[96];
  snprintf(want, sizeof want, " [%.*s]:%u ", (int)iplen, ip, port);
  for (int r = 0; r < p->size; r++)
    if (r != self && p->socks && p->socks[r] && strstr(p->socks[r], want)) return r;
  return -1;
}

int coll__gloo_peers_blame(const coll__gloo_peers *p, int self, const char *text) {
  for (const char *open = text ? strchr(text, '[') : NULL; open; open = strchr(open + 1, '[')) {
    const char *close = strstr(open, "]:");
    if (!close || close - open > INET6_ADDRSTRLEN) continue;
    char *end;
    unsigned long port = strtoul(close + 2, &end, 10);
    if (end == close + 2 || port > 65535) continue;
    /* Debian's Gloo prints the port in network byte order: try both. */
    unsigned swapped = ((port & 0xff) << 8) | (port >> 8);
    int r = owner(p, self, open + 1, (size_t)(close - open - 1), (unsigned)port);
    if (r < 0) r = owner(p, self, open + 1, (size_t)(close - open - 1), swapped);
    if (r >= 0) return r;
  }
  return -1;
}

void coll__gloo_peers_free(coll__gloo_peers *p) {
  for (int r = 0; p->socks && r < p->size; r++) free(p->socks[r]);
  free(p->socks);
  free(p->fds);
  p->socks = NULL;
  p->fds = NULL;
  p->nfds = 0;
}
