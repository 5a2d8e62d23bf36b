/* The rank's side of the launcher's protocol (launcher.h): as it exits, a
 * rank our launcher started writes its done mark, and with it whom its last
 * failure blamed (the blame mark), in one write on COLL_RESULTS_FD. */
#include "launch/launcher.h"
#include "coll_tool.h"

#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

/* What the done mark needs, read while the environment still holds it (a
 * rank's code may clear COLL_RESULTS_FD from it before exiting). */
static int done_fd = -1;
static char done_line[128];
static size_t done_len;
static long done_rank;

/* The rank this process blamed as its launcher numbers ranks, or -1. A rank
 * of a multi-host job (--nnodes) was given its job's RANK after the mark was
 * registered: libcoll blames job ranks, and this host's launcher knows its own
 * (those of the job minus the difference; one of another host is dropped). */
static long blamed_here(long blamed)
{
    const char *now = getenv("RANK");
    char *end = NULL;
    long job_rank = now ? strtol(now, &end, 10) : 0;
    if (!now || !*now || *end) job_rank = done_rank;
    long here = blamed - (job_rank - done_rank);
    return here >= 0 && here != done_rank ? here : -1;
}

static void write_done_mark(void)
{
    if (done_fd < 0) return;
    size_t len = done_len;
    int blamed = coll_last_blamed_rank();
    char who[24] = "";
    if (blamed == COLL_BLAMED_UNKNOWN) snprintf(who, sizeof who, "?");
    else if (blamed >= 0 && blamed_here(blamed) >= 0)
        snprintf(who, sizeof who, "%ld", blamed_here(blamed));
    if (*who) {
        int n = snprintf(done_line + len, sizeof done_line - len, COLL_BLAME_MARK "%ld %s\n",
                         done_rank, who);
        if (n > 0 && (size_t)n < sizeof done_line - len) len += (size_t)n;
    }
    /* one write of short lines: atomic on a pipe, never inside another rank's line */
    if (write(done_fd, done_line, len) < 0) done_fd = -1;
}

void coll__launch_mark_done_at_exit(void)
{
    const char *fd = getenv(COLL_ENV_RESULTS_FD), *rank = getenv("RANK");
    char *end;
    if (!fd || !*fd || !rank || !*rank || done_fd >= 0) return;
    long f = strtol(fd, &end, 10);
    if (*end || f < 0 || f > INT_MAX) return;
    long r = strtol(rank, &end, 10);
    if (*end || r < 0 || r > INT_MAX) return;
    int n = snprintf(done_line, sizeof done_line, COLL_DONE_MARK "%ld\n", r);
    if (n <= 0 || (size_t)n >= sizeof done_line) return;
    done_rank = r;
    /* our own copy: the program may close its COLL_RESULTS_FD (fclose of an
     * fdopen) and the number be reused by a socket before exit */
    int own = fcntl((int)f, F_DUPFD_CLOEXEC, 3);
    if (own < 0) return;
    done_len = (size_t)n;
    done_fd = own;
    atexit(write_done_mark);
}
