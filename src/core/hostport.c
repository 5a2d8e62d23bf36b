/* host:port text for IPv4, IPv6 and names (hostport.h). */
#include "core/hostport.h"
#include "coll.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int coll__hostport_parse(const char *s, char *host, size_t hostlen, int *port, char *err,
                         size_t errlen)
{
    const char *h = s, *colon;
    size_t n;
    if (s[0] == '[') {
        const char *close = strchr(s, ']');
        if (!close) {
            snprintf(err, errlen, "'%s': '[' without a closing ']' around the IPv6 address", s);
            return COLL_EINVAL;
        }
        h = s + 1;
        n = (size_t)(close - h);
        if (close[1] != ':') {
            snprintf(err, errlen, "'%s': expected ':port' after ']'", s);
            return COLL_EINVAL;
        }
        colon = close + 1;
    } else {
        colon = strrchr(s, ':');
        if (!colon) {
            snprintf(err, errlen, "'%s': expected host:port", s);
            return COLL_EINVAL;
        }
        if (memchr(s, ':', (size_t)(colon - s)) || strchr(s, ']')) {
            snprintf(err, errlen,
                     "'%s': an IPv6 address needs brackets around it, as [fd00::1]:29500", s);
            return COLL_EINVAL;
        }
        n = (size_t)(colon - s);
    }
    if (n == 0) {
        snprintf(err, errlen, "'%s': empty host before the port", s);
        return COLL_EINVAL;
    }
    if (n >= hostlen) {
        snprintf(err, errlen, "'%s': host longer than %zu characters", s, hostlen - 1);
        return COLL_EINVAL;
    }
    char *end;
    long p = strtol(colon + 1, &end, 10);
    /* 0 is refused: a random port nobody else learns. */
    if (end == colon + 1 || *end || colon[1] == '-' || colon[1] == '+' || p < 1 || p > 65535) {
        snprintf(err, errlen, "'%s': the port '%s' is not a number in 1..65535", s, colon + 1);
        return COLL_EINVAL;
    }
    memcpy(host, h, n);
    host[n] = '\0';
    *port = (int)p;
    return COLL_OK;
}

int coll__hostport_format(char *buf, size_t len, const char *host, int port)
{
    return strchr(host, ':') && host[0] != '[' ? snprintf(buf, len, "[%s]:%d", host, port)
                                               : snprintf(buf, len, "%s:%d", host, port);
}

void coll__host_unbracket(const char *host, char *out, size_t outlen)
{
    size_t n = strlen(host);
    if (n >= 2 && host[0] == '[' && host[n - 1] == ']')
        snprintf(out, outlen, "%.*s", (int)(n - 2), host + 1);
    else snprintf(out, outlen, "%s", host);
}
