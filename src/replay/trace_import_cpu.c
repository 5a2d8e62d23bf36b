/* The calling thread's CPU time between calls, read from a profiler trace's
 * CPU operators (trace_import_event.h): what the torch backend records as
 * `cpu` and `wait_cpu`, for a program recorded with torch.profiler. A thread
 * runs the program's compute inside operators (cat "cpu_op", complete
 * events), so the time some operator of the calling thread ran stands for its
 * CPU time; waiting for a call (DDP's end of backward) happens outside them. */
#ifdef COLL_HAVE_JANSSON

#include <stdlib.h>
#include <string.h>

#include "replay/trace_import_event.h"

/* A call's end inside an idle stretch of its thread at least this long
 * before it, with an operator starting soon after it: the thread waited for
 * that call. Python between operators is idle here too, but runs for
 * microseconds, not a tenth of a millisecond. "Soon": within WAIT_RESUME_US,
 * or within an eighth of the stretch. A woken thread waits for a core where
 * the cores are busy (a scheduler tick: 4 ms at HZ=250), and a DDP program
 * recorded on gloo with 2-4 ranks on 2 cores resumed 0.7-8.2 ms after the
 * bucket it waited for (docs/PERFORMANCE.md), where an earlier bucket that
 * ended in the same stretch ended halfway through it. */
#define WAIT_IDLE_US 100.0
#define WAIT_RESUME_US 500.0
#define WAIT_RESUME_SHARE 8.0

typedef struct span {
    double from, to; /* us */
} span;

static int by_from(const void *a, const void *b)
{
    const span *x = a, *y = b;
    return x->from < y->from ? -1 : x->from > y->from;
}

/* The times thread (pid, tid) was inside some operator: disjoint, in order,
 * *n of them in a new array; NULL (and *n 0) when none or out of memory. */
static span *busy_spans(json_t *events, long long pid, long long tid, size_t *n)
{
    size_t i, cap = 0;
    json_t *o;
    span *s = NULL;
    *n = 0;
    json_array_foreach(events, i, o)
    {
        json_t *cat = json_object_get(o, "cat"), *ph = json_object_get(o, "ph");
        if (!json_is_string(cat) || strcmp(json_string_value(cat), "cpu_op") ||
            !json_is_string(ph) || strcmp(json_string_value(ph), "X") ||
            json_integer_value(json_object_get(o, "pid")) != pid ||
            json_integer_value(json_object_get(o, "tid")) != tid)
            continue;
        double ts = json_number_value(json_object_get(o, "ts"));
        double dur = json_number_value(json_object_get(o, "dur"));
        if (!(dur > 0)) continue;
        if (*n == cap) {
            span *more = realloc(s, (cap = cap ? 2 * cap : 1024) * sizeof *s);
            if (!more) return free(s), *n = 0, NULL;
            s = more;
        }
        s[(*n)++] = (span){ts, ts + dur};
    }
    if (!*n) return free(s), NULL;
    qsort(s, *n, sizeof *s, by_from);
    size_t k = 0; /* nested and overlapping operators merged */
    for (size_t j = 1; j < *n; j++) {
        if (s[j].from <= s[k].to) {
            if (s[j].to > s[k].to) s[k].to = s[j].to;
        } else {
            s[++k] = s[j];
        }
    }
    *n = k + 1;
    return s;
}

/* The first span that ends after t (n: none). */
static size_t first_after(const span *s, size_t n, double t)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (s[mid].to <= t) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

/* The busy time within [from, to], us. */
static double busy_in(const span *s, size_t n, double from, double to)
{
    double sum = 0;
    for (size_t k = first_after(s, n, from); k < n && s[k].from < to; k++)
        sum += (s[k].to < to ? s[k].to : to) - (s[k].from > from ? s[k].from : from);
    return sum;
}

/* The calls of one thread (idx: their indexes in calls, in issue order, m of
 * them): their cpu (from the previous call's return) and, where the thread
 * sat idle for a call's end, their wait_cpu. A thread's calls are spans one
 * after the other on it, so their returns come in issue order. */
static void one_thread(const import_call *calls, replay_call *out, const size_t *idx, size_t m,
                       const span *s, size_t ns)
{
    for (size_t a = 1; a < m; a++) {
        const import_ev *p = calls[idx[a - 1]].ev, *e = calls[idx[a]].ev;
        if (e->ts >= p->ts + p->dur)
            out[idx[a]].cpu = replay_import_ns(busy_in(s, ns, p->ts + p->dur, e->ts));
    }
    for (size_t a = 0; a < m; a++) {
        if (!calls[idx[a]].ev->inner) continue; /* no end of its work */
        double end = (double)out[idx[a]].t1 / 1e3;
        size_t lo = 0, hi = m; /* the thread's calls returned by the end */
        while (lo < hi) {
            size_t mid = lo + (hi - lo) / 2;
            const import_ev *f = calls[idx[mid]].ev;
            if (f->ts + f->dur <= end) lo = mid + 1;
            else hi = mid;
        }
        if (lo == 0) continue;
        double since = calls[idx[lo - 1]].ev->ts + calls[idx[lo - 1]].ev->dur;
        size_t k = first_after(s, ns, end);
        if (k < ns && s[k].from <= end) continue; /* in an operator: running */
        double idle_from = k > 0 && s[k - 1].to > since ? s[k - 1].to : since;
        if (end - idle_from < WAIT_IDLE_US || k == ns) continue;
        double lag = s[k].from - end, stretch = s[k].from - idle_from;
        if (lag > WAIT_RESUME_US && lag > stretch / WAIT_RESUME_SHARE) continue;
        out[idx[a]].wait_cpu = replay_import_ns(busy_in(s, ns, since, idle_from));
    }
}

void replay_import_cpu(json_t *events, const import_call *calls, replay_call *out, size_t n)
{
    size_t *idx = malloc((n ? n : 1) * sizeof *idx);
    for (size_t i = 0; i < n; i++) out[i].cpu = out[i].wait_cpu = -1;
    for (size_t i = 0; idx && i < n; i++) {
        const import_ev *e = calls[i].ev;
        if (e->kind != IMPORT_C10D && e->kind != IMPORT_PARAM) continue; /* not the caller's */
        int seen = 0; /* each thread once: at its first call */
        for (size_t j = 0; j < i && !seen; j++)
            seen = calls[j].ev->pid == e->pid && calls[j].ev->tid == e->tid;
        if (seen) continue;
        size_t m = 0, ns;
        for (size_t j = i; j < n; j++)
            if (calls[j].ev->pid == e->pid && calls[j].ev->tid == e->tid) idx[m++] = j;
        span *s = busy_spans(events, e->pid, e->tid, &ns);
        if (s) one_thread(calls, out, idx, m, s, ns);
        free(s);
    }
    free(idx);
}

#endif
