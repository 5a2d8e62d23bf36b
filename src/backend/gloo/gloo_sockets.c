#include "backend/gloo/gloo_sockets.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* One 32-bit word as /proc/net prints it: the word's bytes as they lie in
 * memory, read as a native integer (so "0100007F" is 127.0.0.1 here). */
static int hex_word(const char *hex, unsigned char out[4]) {
  char word[9];
  memcpy(word, hex, 8);
  word[8] = '\0';
  char *end;
  unsigned long v = strtoul(word, &end, 16);
  if (*end) return -1;
  uint32_t w = (uint32_t)v;
  memcpy(out, &w, 4);
  return 0;
}

int coll__proc_net_addr(const char *hex, char *buf, size_t len) {
  const char *colon = strchr(hex, ':');
  size_t digits = colon ? (size_t)(colon - hex) : 0;
  if (digits != 8 && digits != 32) return -1;
  for (size_t i = 0; i < digits; i++)
    if (!strchr("0123456789abcdefABCDEF", hex[i])) return -1;
  char *end;
  unsigned long port = strtoul(colon + 1, &end, 16);
  if (end == colon + 1 || port > 65535) return -1;
  unsigned char a[16];
  for (size_t w = 0; w < digits / 8; w++)
    if (hex_word(hex + 8 * w, a + 4 * w)) return -1;
  char ip[INET6_ADDRSTRLEN];
  if (!inet_ntop(digits == 8 ? AF_INET : AF_INET6, a, ip, sizeof ip)) return -1;
  int n = snprintf(buf, len, "[%s]:%lu", ip, port);
  return n > 0 && (size_t)n < len ? 0 : -1;
}

typedef struct fd_inode {
  int fd, found;
  unsigned long inode;
} fd_inode;

/* This process's descriptors that are sockets, with their inodes. */
static int socket_fds(fd_inode **out) {
  DIR *d = opendir("/proc/self/fd");
  if (!d) return -1;
  int n = 0, cap = 0, rc = 0;
  fd_inode *v = NULL;
  for (struct dirent *e; (e = readdir(d));) {
    char path[64], link[64];
    if (e->d_name[0] == '.') continue;
    snprintf(path, sizeof path, "/proc/self/fd/%.20s", e->d_name);
    ssize_t l = readlink(path, link, sizeof link - 1);
    unsigned long inode;
    if (l <= 0) continue; /* closed since the directory was read */
    link[l] = '\0';
    if (sscanf(link, "socket:[%lu]", &inode) != 1) continue;
    if (n == cap) {
      fd_inode *more = realloc(v, (size_t)(cap = cap ? 2 * cap : 16) * sizeof *v);
      if (!more) {
        rc = -1;
        break;
      }
      v = more;
    }
    v[n] = (fd_inode){.fd = atoi(e->d_name), .inode = inode};
    n++;
  }
  closedir(d);
  if (rc) {
    free(v);
    return -1;
  }
  *out = v;
  return n;
}

/* The table's rows whose inode is one of ours, into out[] (nout so far, room
 * for nfds). The kernel prints the table in pieces, one per read, and rows
 * that move between two reads come twice (or not at all): one read of a
 * large buffer, and each descriptor taken once. */
static void read_table(const char *path, fd_inode *fds, int nfds, coll__own_socket *out,
                       int *nout) {
  FILE *f = fopen(path, "r");
  char line[512];
  if (!f) return; /* no IPv6 here, say */
  setvbuf(f, NULL, _IOFBF, 1 << 20);
  while (fgets(line, sizeof line, f)) {
    char local[80], peer[80];
    unsigned long inode;
    /* sl local rem st tx:rx tr:when retrnsmt uid timeout inode */
    if (sscanf(line, " %*d: %79s %79s %*x %*x:%*x %*x:%*x %*x %*u %*u %lu", local, peer, &inode) !=
        3)
      continue; /* the header */
    for (int i = 0; i < nfds && *nout < nfds; i++) {
      if (fds[i].inode != inode || fds[i].found) continue;
      coll__own_socket *s = &out[*nout];
      if (coll__proc_net_addr(local, s->local, sizeof s->local) ||
          coll__proc_net_addr(peer, s->peer, sizeof s->peer))
        break;
      s->fd = fds[i].fd;
      fds[i].found = 1;
      ++*nout;
      break;
    }
  }
  fclose(f);
}

int coll__own_sockets(coll__own_socket **out) {
  static const char *const tables[] = {"/proc/net/tcp", "/proc/net/tcp6", NULL};
  return coll__own_sockets_in(tables, out);
}

int coll__own_sockets_in(const char *const *tables, coll__own_socket **out) {
  fd_inode *fds = NULL;
  int nfds = socket_fds(&fds);
  *out = NULL;
  if (nfds <= 0) return nfds;
  /* one row per descriptor at most (read_table) */
  coll__own_socket *v = calloc((size_t)nfds, sizeof *v);
  int n = 0;
  if (v) {
    for (const char *const *t = tables; *t; t++) read_table(*t, fds, nfds, v, &n);
  }
  free(fds);
  if (!v) return -1;
  if (n == 0) {
    free(v);
    return 0;
  }
  *out = v;
  return n;
}
