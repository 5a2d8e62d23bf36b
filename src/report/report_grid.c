/* Panels of a small-multiples figure (report_grid.h). */
#include "report/report_grid.h"

#include "coll.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int same_machine(const report_series *a, const report_series *b)
{
    return !strcmp(a->host, b->host) && !strcmp(a->device, b->device) && a->nnodes == b->nnodes;
}

static void add_name(const char **names, size_t *n, size_t cap, const char *name)
{
    for (size_t i = 0; i < *n; i++)
        if (!strcmp(names[i], name)) return;
    if (*n < cap) names[(*n)++] = name;
}

static int cmp_int(const void *a, const void *b)
{
    return (*(const int *)a > *(const int *)b) - (*(const int *)a < *(const int *)b);
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The row's title names what varies among the machines (and the buffer kind
 * when the machine's panels are split by it); the panel's its process count. */
static void row_title(const report_view *v, const report_series *s, const char *buffers, char *t,
                      size_t len)
{
    size_t at = 0;
    t[0] = '\0';
#define ADD(...)                                                             \
    do {                                                                     \
        if (at < len) at += (size_t)snprintf(t + at, len - at, __VA_ARGS__); \
    } while (0)
    if (v->many_hosts) ADD("%.40s", s->host[0] ? s->host : "(unknown host)");
    if (v->many_devices) ADD("%s%.16s", at ? ", " : "", s->device);
    if (v->many_nnodes)
        ADD("%s%d %s", at ? ", " : "", s->nnodes, s->nnodes == 1 ? "node" : "nodes");
    if (buffers) ADD("%s%.16s buffers", at ? ", " : "", buffers);
#undef ADD
}

/* Series of collective on machine m (and buffer kind b unless NULL) with p processes. */
static int in_panel(const report_series *s, const char *collective, const report_series *m,
                    const char *b, int p)
{
    return !strcmp(s->collective, collective) && same_machine(s, m) &&
           (!b || !strcmp(s->buffers, b)) && s->nprocs == p;
}

int report_grid_build(const report_view *v, const char *collective, report_grid *g)
{
    memset(g, 0, sizeof *g);
    if (v->n == 0) return 0;
    g->p = calloc(v->n, sizeof *g->p); /* at most one panel per series */
    int *procs = calloc(v->n, sizeof *procs);
    if (!g->p || !procs) {
        free(procs);
        report_grid_free(g);
        return COLL_ENOMEM;
    }
    int row = 0;
    for (size_t i = 0; i < v->n; i++) {
        const report_series *m = &v->s[i];
        if (strcmp(m->collective, collective)) continue;
        add_name(g->backends, &g->nbackends, 16, m->backend);
        add_name(g->buffers, &g->nbuffers, 8, m->buffers);
        int seen = 0; /* the machine's panels are made at its first series */
        for (size_t j = 0; j < i && !seen; j++)
            seen = !strcmp(v->s[j].collective, collective) && same_machine(&v->s[j], m);
        if (seen) continue;
        /* The machine's buffer kinds and process counts; its widest panel. */
        const char *kinds[8];
        size_t nkinds = 0, nprocs = 0, widest = 0;
        for (size_t j = i; j < v->n; j++) {
            const report_series *s = &v->s[j];
            if (strcmp(s->collective, collective) || !same_machine(s, m)) continue;
            add_name(kinds, &nkinds, 8, s->buffers);
            size_t k = 0;
            while (k < nprocs && procs[k] != s->nprocs) k++;
            if (k == nprocs) procs[nprocs++] = s->nprocs;
        }
        qsort(procs, nprocs, sizeof *procs, cmp_int);
        qsort(kinds, nkinds, sizeof *kinds, cmp_str);
        for (size_t k = 0; k < nprocs; k++) {
            size_t lines = 0;
            for (size_t j = i; j < v->n; j++)
                lines += in_panel(&v->s[j], collective, m, NULL, procs[k]);
            if (lines > widest) widest = lines;
        }
        int split = widest > REPORT_GRID_MAX_LINES;
        for (size_t b = 0; b < (split ? nkinds : 1); b++) {
            const char *kind = split ? kinds[b] : NULL;
            int col = 0;
            for (size_t k = 0; k < nprocs; k++) {
                grid_panel *p = NULL;
                int part = 0;
                for (size_t j = i; j < v->n; j++) {
                    if (!in_panel(&v->s[j], collective, m, kind, procs[k])) continue;
                    if (!p || p->n == REPORT_GRID_MAX_LINES) {
                        if (p) part++;
                        if (col == REPORT_GRID_MAX_COLS) col = 0, row++;
                        p = &g->p[g->n++];
                        p->row = row;
                        p->col = col++;
                        if (col > g->ncols) g->ncols = col;
                        snprintf(p->title, sizeof p->title, "%d %s", procs[k],
                                 procs[k] == 1 ? "process" : "processes");
                        if (part > 0)
                            snprintf(p->title + strlen(p->title),
                                     sizeof p->title - strlen(p->title), " (%d)", part + 1);
                        row_title(v, m, kind, p->row_title, sizeof p->row_title);
                    }
                    p->s[p->n++] = &v->s[j];
                }
            }
            if (col > 0) row++;
        }
    }
    g->nrows = row;
    free(procs);
    qsort(g->backends, g->nbackends, sizeof g->backends[0], cmp_str);
    qsort(g->buffers, g->nbuffers, sizeof g->buffers[0], cmp_str);
    return 0;
}

void report_grid_free(report_grid *g)
{
    free(g->p);
    memset(g, 0, sizeof *g);
}
