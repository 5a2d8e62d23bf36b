/* "host:port" text for both address families: an IPv6 literal is written and
 * read as "[addr]:port" (its own colons would make the port ambiguous). Used by
 * the init methods' URLs, the addresses ranks publish through the store, and messages. */
#ifndef COLL_HOSTPORT_H
#define COLL_HOSTPORT_H

#include <stddef.h>

/* Longest "[IPv6 literal%scope]:65535" or host name with a port. */
#define COLL_HOSTPORT_MAX 300

/* Parse "host:port", "a.b.c.d:port" or "[ipv6]:port" (port 1..65535) into host
 * (brackets removed) and *port. COLL_OK, or COLL_EINVAL with err saying what is
 * wrong (an unbracketed IPv6 literal, a missing or bad port, empty host). */
int coll__hostport_parse(const char *s, char *host, size_t hostlen, int *port, char *err,
                         size_t errlen);
/* host:port, bracketing host when it holds a colon (an IPv6 literal) and is not
 * bracketed already. Returns
 * the length written, as snprintf. */
int coll__hostport_format(char *buf, size_t len, const char *host, int port);
/* host without surrounding brackets ("[fd00::1]" -> "fd00::1"), into out. */
void coll__host_unbracket(const char *host, char *out, size_t outlen);

#endif
