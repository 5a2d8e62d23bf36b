/* Random job tokens (see token.h). */
#include "core/token.h"
#include "coll.h"

#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <sys/random.h>
#include <unistd.h>

/* /dev/urandom stands in where getrandom() is missing (old kernels, seccomp). */
static int read_urandom(unsigned char *buf, size_t len)
{
    int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
    if (fd < 0) return COLL_ESYS;
    size_t got = 0;
    while (got < len) {
        ssize_t n = read(fd, buf + got, len - got);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        got += (size_t)n;
    }
    close(fd);
    return got == len ? COLL_OK : COLL_ESYS;
}

static int random_bytes(unsigned char *buf, size_t len)
{
    size_t got = 0;
    while (got < len) {
        ssize_t n = getrandom(buf + got, len - got, 0);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0 && errno == ENOSYS) return read_urandom(buf + got, len - got);
        if (n <= 0) return COLL_ESYS;
        got += (size_t)n;
    }
    return COLL_OK;
}

int coll__token_generate(char hex[COLL_TOKEN_HEX_LEN + 1])
{
    static const char digits[] = "0123456789abcdef";
    unsigned char raw[COLL_TOKEN_BYTES];
    int rc = random_bytes(raw, sizeof raw);
    if (rc != COLL_OK) {
        hex[0] = '\0';
        return rc;
    }
    for (size_t i = 0; i < sizeof raw; i++) {
        hex[2 * i] = digits[raw[i] >> 4];
        hex[2 * i + 1] = digits[raw[i] & 15];
    }
    hex[COLL_TOKEN_HEX_LEN] = '\0';
    return COLL_OK;
}

int coll__token_is_valid(const char *s)
{
    if (!s) return 0;
    size_t i = 0;
    for (; s[i]; i++) {
        int hexdigit = (s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f');
        if (!hexdigit || i >= COLL_TOKEN_HEX_LEN) return 0;
    }
    return i == COLL_TOKEN_HEX_LEN;
}
