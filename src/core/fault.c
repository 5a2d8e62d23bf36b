/* Fault injection (see fault.h). COLL_FAULT is parsed once; each fault of this
 * rank keeps a running total per point and fires once, at the first hit that
 * brings the total to its threshold. Hits come from several threads (the
 * caller, the progress thread, the store server), so the state is atomic. */
#include "core/fault.h"
#include "coll.h"

#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/clock.h"

#define MAX_FAULTS 16

typedef struct fault {
    coll__fault_point point;
    coll__fault_action action;
    size_t threshold;
    atomic_size_t total; /* amount seen at this point so far */
    atomic_int fired;
} fault;

static fault faults[MAX_FAULTS];
static atomic_int nfaults;     /* faults of this rank (published after they are filled) */
static atomic_int armed;       /* fast path: 0 when none is left to fire */
static atomic_int initialised; /* parsed already: later communicators reuse it */

static const char *const point_names[COLL_FAULT_POINT_COUNT] = {
    "rendezvous", "connect", "collective", "progress", "store",
};

static const char *const action_names[] = {"none",         "kill",    "hang",
                                           "close-socket", "corrupt", "delay"};

const char *coll__fault_point_name(coll__fault_point p)
{
    return (unsigned)p < COLL_FAULT_POINT_COUNT ? point_names[p] : "?";
}

const char *coll__fault_action_name(coll__fault_action a)
{
    return (unsigned)a <= COLL_FAULT_DELAY ? action_names[a] : "?";
}

static int lookup(const char *text, size_t len, const char *const *names, int n)
{
    for (int i = 0; i < n; i++)
        if (strlen(names[i]) == len && strncmp(text, names[i], len) == 0) return i;
    return -1;
}

/* "123", "64K", "1M", "2G" (powers of 1024). */
static int parse_amount(const char *s, size_t len, size_t *out)
{
    char buf[32];
    if (len == 0 || len >= sizeof buf) return -1;
    memcpy(buf, s, len);
    buf[len] = '\0';
    char *end;
    unsigned long long v = strtoull(buf, &end, 10);
    if (end == buf || buf[0] == '-') return -1;
    unsigned shift = 0;
    if (*end == 'K' || *end == 'k') shift = 10;
    else if (*end == 'M' || *end == 'm') shift = 20;
    else if (*end == 'G' || *end == 'g') shift = 30;
    if (shift) end++;
    if (*end || v > (SIZE_MAX >> shift)) return -1;
    *out = (size_t)(v << shift);
    return 0;
}

/* One "rank:point[:action[:arg]]" of len bytes. Returns 0 and fills f (rank in
 * *rank), or -1 with why. */
static int parse_one(const char *s, size_t len, int *rank, fault *f, char *why, size_t whylen)
{
    const char *field[4] = {0};
    size_t flen[4] = {0};
    int nf = 0;
    const char *p = s, *end = s + len;
    while (nf < 4) {
        const char *colon = memchr(p, ':', (size_t)(end - p));
        field[nf] = p;
        flen[nf++] = (size_t)((colon ? colon : end) - p);
        if (!colon) break;
        p = colon + 1;
    }
    if (nf == 4 && field[3] + flen[3] < end) {
        snprintf(why, whylen, "too many ':' fields");
        return -1;
    }
    if (nf < 2) {
        snprintf(why, whylen, "expected rank:point[:action[:arg]]");
        return -1;
    }
    char rbuf[16];
    char *rend;
    if (flen[0] == 0 || flen[0] >= sizeof rbuf) {
        snprintf(why, whylen, "rank is not a number");
        return -1;
    }
    memcpy(rbuf, field[0], flen[0]);
    rbuf[flen[0]] = '\0';
    long r = strtol(rbuf, &rend, 10);
    if (*rend || r < 0 || r > 1000000) {
        snprintf(why, whylen, "rank '%s' is not a number >= 0", rbuf);
        return -1;
    }
    int point = lookup(field[1], flen[1], point_names, COLL_FAULT_POINT_COUNT);
    if (point < 0) {
        snprintf(why, whylen,
                 "unknown point '%.*s' (rendezvous, connect, collective, progress, store)",
                 (int)flen[1], field[1]);
        return -1;
    }
    int action = COLL_FAULT_KILL;
    if (nf >= 3 && (action = lookup(field[2], flen[2], action_names, 6)) <= COLL_FAULT_NONE) {
        snprintf(why, whylen, "unknown action '%.*s' (kill, hang, close-socket, corrupt, delay)",
                 (int)flen[2], field[2]);
        return -1;
    }
    size_t threshold = 0;
    if (nf == 4 && parse_amount(field[3], flen[3], &threshold)) {
        snprintf(why, whylen, "argument '%.*s' is not a byte count (K/M/G suffixes allowed)",
                 (int)flen[3], field[3]);
        return -1;
    }
    *rank = (int)r;
    f->point = (coll__fault_point)point;
    f->action = (coll__fault_action)action;
    f->threshold = threshold;
    return 0;
}

int coll__fault_parse(const char *spec, int rank, char *err, size_t errlen)
{
    atomic_store(&armed, 0);
    atomic_store(&nfaults, 0);
    int n = 0;
    const char *p = spec ? spec : "";
    while (*p) {
        const char *comma = strchr(p, ',');
        size_t len = comma ? (size_t)(comma - p) : strlen(p);
        fault f = {0};
        int r;
        char why[160];
        if (parse_one(p, len, &r, &f, why, sizeof why)) {
            snprintf(err, errlen, "COLL_FAULT: bad entry '%.*s': %s", (int)len, p, why);
            return COLL_EINVAL;
        }
        if (r == rank) {
            if (n == MAX_FAULTS) {
                snprintf(err, errlen, "COLL_FAULT: more than %d faults for rank %d", MAX_FAULTS,
                         rank);
                return COLL_EINVAL;
            }
            faults[n].point = f.point;
            faults[n].action = f.action;
            faults[n].threshold = f.threshold;
            atomic_store(&faults[n].total, 0);
            atomic_store(&faults[n].fired, 0);
            n++;
        }
        p += len;
        if (*p == ',') p++;
    }
    atomic_store(&nfaults, n);
    atomic_store(&armed, n > 0);
    return COLL_OK;
}

int coll__fault_init(int rank, char *err, size_t errlen)
{
    const char *spec = getenv("COLL_FAULT");
    if (!spec || !*spec) return COLL_OK;
    /* Once per process: a second communicator must not re-arm faults that fired. */
    if (atomic_exchange(&initialised, 1)) return COLL_OK;
    int rc = coll__fault_parse(spec, rank, err, errlen);
    if (rc) atomic_store(&initialised, 0);
    return rc;
}

static void announce(const fault *f, size_t total)
{
    /* One write(): async-signal-safe enough and not interleaved with other ranks. */
    char line[160];
    int n = snprintf(line, sizeof line, "collbench: COLL_FAULT: pid %ld: %s at %s (after %zu)\n",
                     (long)getpid(), coll__fault_action_name(f->action),
                     coll__fault_point_name(f->point), total);
    if (n > 0 && write(STDERR_FILENO, line, (size_t)n) < 0) {
    }
}

static void hang_forever(void)
{
    /* Blocks, using no CPU, until a signal ends the process (the launcher's). */
    for (;;) pause();
}

/* A slow rank: $COLL_FAULT_DELAY_S seconds (default 3), then on as usual. */
static void delay(void)
{
    const char *v = getenv("COLL_FAULT_DELAY_S");
    double s = v && *v ? strtod(v, NULL) : 3.0;
    if (!(s > 0 && s < 3600)) s = 3.0;
    coll__sleep_s(s);
}

int coll__fault_pending(void) { return atomic_load_explicit(&armed, memory_order_relaxed) != 0; }

coll__fault_action coll__fault_hit(coll__fault_point point, size_t amount)
{
    if (__builtin_expect(!atomic_load_explicit(&armed, memory_order_relaxed), 1))
        return COLL_FAULT_NONE;
    int n = atomic_load(&nfaults);
    coll__fault_action act = COLL_FAULT_NONE;
    int left = 0;
    for (int i = 0; i < n; i++) {
        fault *f = &faults[i];
        if (atomic_load(&f->fired)) continue;
        left++;
        if (f->point != point) continue;
        size_t total = atomic_fetch_add(&f->total, amount) + amount;
        if (total < f->threshold || atomic_exchange(&f->fired, 1)) continue;
        left--;
        announce(f, total);
        if (f->action == COLL_FAULT_KILL) raise(SIGKILL);
        if (f->action == COLL_FAULT_HANG) hang_forever();
        if (f->action == COLL_FAULT_DELAY) {
            delay();
            continue;
        }
        if (act == COLL_FAULT_NONE) act = f->action;
    }
    if (left == 0) atomic_store(&armed, 0);
    return act;
}
