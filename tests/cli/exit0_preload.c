/* LD_PRELOAD shim for tests/cli/early_exit.sh: in the rank named by
 * $EXIT0_RANK, a thread calls _exit(0) $EXIT0_AFTER_MS milliseconds after the
 * process starts, as a script that returns early on one rank would. */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static void *leave(void *arg)
{
    long ms = (long)(intptr_t)arg;
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
    _exit(0);
    return NULL;
}

__attribute__((constructor)) static void start(void)
{
    const char *rank = getenv("RANK"), *which = getenv("EXIT0_RANK"),
               *after = getenv("EXIT0_AFTER_MS");
    if (!rank || !which || !after || strcmp(rank, which) != 0) return;
    pthread_t t;
    if (pthread_create(&t, NULL, leave, (void *)(intptr_t)atol(after)) == 0) pthread_detach(t);
}
