/* The job token from a file or the environment (token.h): a file keeps it out
 * of /proc/<pid>/cmdline, which every user of the host can read. */
#include "core/token.h"
#include "coll.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Printable, no spaces, at most COLL_TOKEN_HEX_LEN characters (what fits every
 * message that carries it). what names the source in the error. */
static int check_text(const char *t, const char *what, char *err, size_t errlen)
{
    size_t n = strlen(t);
    if (n == 0) {
        snprintf(err, errlen, "%s: the job token is empty", what);
        return COLL_EINVAL;
    }
    if (n > COLL_TOKEN_HEX_LEN) {
        snprintf(err, errlen, "%s: the job token is longer than %d characters", what,
                 COLL_TOKEN_HEX_LEN);
        return COLL_EINVAL;
    }
    for (; *t; t++)
        if ((unsigned char)*t <= ' ' || *t == 0x7f) {
            snprintf(err, errlen, "%s: the job token must be printable characters without spaces",
                     what);
            return COLL_EINVAL;
        }
    return COLL_OK;
}

int coll__token_read_file(const char *path, char out[COLL_TOKEN_HEX_LEN + 1], char *err,
                          size_t errlen)
{
    char buf[COLL_TOKEN_HEX_LEN + 3]; /* room to notice a token too long */
    out[0] = '\0';
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0) {
        snprintf(err, errlen, "job token file %s: %s", path, strerror(errno));
        if (fd >= 0) close(fd);
        return COLL_EINVAL;
    }
    /* A secret others can read is no secret (ssh refuses such keys too). */
    if (!S_ISREG(st.st_mode) || (st.st_mode & 077)) {
        snprintf(err, errlen, "job token file %s: %s", path,
                 S_ISREG(st.st_mode) ? "readable by group or others: chmod 600 it"
                                     : "not a regular file");
        close(fd);
        return COLL_EINVAL;
    }
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n < 0) {
        snprintf(err, errlen, "job token file %s: %s", path, strerror(errno));
        return COLL_EINVAL;
    }
    buf[n] = '\0';
    buf[strcspn(buf, "\r\n")] = '\0'; /* one line; `echo` adds the newline */
    char what[300];
    snprintf(what, sizeof what, "job token file %s", path);
    int rc = check_text(buf, what, err, errlen);
    if (rc == COLL_OK) memcpy(out, buf, strlen(buf) + 1);
    return rc;
}

int coll__token_from_env(char out[COLL_TOKEN_HEX_LEN + 1], char *err, size_t errlen)
{
    const char *t = getenv(COLL_ENV_JOB_TOKEN_VAR), *file = getenv(COLL_ENV_JOB_TOKEN_FILE);
    out[0] = '\0';
    if (t && *t) {
        int rc = check_text(t, COLL_ENV_JOB_TOKEN_VAR, err, errlen);
        if (rc == COLL_OK) memcpy(out, t, strlen(t) + 1);
        return rc;
    }
    if (file && *file) return coll__token_read_file(file, out, err, errlen);
    return COLL_OK;
}

int coll__token_from_config(const char *given, char out[COLL_TOKEN_HEX_LEN + 1], char *err,
                            size_t errlen)
{
    if (!given || !*given) return coll__token_from_env(out, err, errlen);
    int rc = check_text(given, "the job token (coll_config.job_token)", err, errlen);
    out[0] = '\0';
    if (rc == COLL_OK) memcpy(out, given, strlen(given) + 1);
    return rc;
}
