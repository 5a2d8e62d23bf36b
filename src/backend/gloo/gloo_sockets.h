/* This process's TCP sockets with both their addresses, read from /proc
 * (its descriptors' links, the network namespace's /proc/net/tcp and tcp6)
 * without a system call on any descriptor: a walk that fstat()s and
 * getpeername()s every descriptor of the process races a thread closing one
 * (another communicator's store thread: ThreadSanitizer saw it), and may
 * name a descriptor reused under it. */
#ifndef COLL_GLOO_SOCKETS_H
#define COLL_GLOO_SOCKETS_H

#include <stddef.h>

typedef struct coll__own_socket {
  int fd;
  char local[64], peer[64]; /* "[ip]:port", Gloo's Address::str() form ("[0.0.0.0]:0": none) */
} coll__own_socket;

/* Each TCP socket among this process's descriptors into *out (the caller
 * frees it; NULL when none): how many, or -1 when /proc cannot be read or
 * memory runs out. */
int coll__own_sockets(coll__own_socket **out);
/* The same from these tables in /proc/net/tcp's form (NULL-terminated). */
int coll__own_sockets_in(const char *const *tables, coll__own_socket **out);
/* "[ip]:port" of an address as the kernel prints it in /proc/net/tcp
 * ("0100007F:1F90") or tcp6 (32 hex digits): 0, or -1 for another form. */
int coll__proc_net_addr(const char *hex, char *buf, size_t len);

#endif
