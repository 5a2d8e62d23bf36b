/* See opt_table.h. */
#include "engine/opt_table.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "engine/sizes.h"
#include "coll.h"
#include "core/errbuf.h"

int bench_opt_fail(bench_opt_ctx *c, const char *fmt, ...)
{
    int n = snprintf(c->err, c->errlen, "%s: ", c->flag ? c->flag : "");
    if (n >= 0 && (size_t)n < c->errlen) {
        va_list ap;
        va_start(ap, fmt);
        coll__vset_err_keep_end(c->err + n, c->errlen - (size_t)n, fmt,
                                ap); /* cuts the value, not the reason */
        va_end(ap);
    }
    return COLL_EINVAL;
}

int bench_opt_help(bench_opt_ctx *c, const char *value)
{
    (void)c, (void)value;
    return BENCH_OPT_HELP;
}

/* ---- values ---- */

int bench_opt_long(bench_opt_ctx *c, const char *v, long lo, long hi, long *out)
{
    char *end;
    errno = 0;
    long x = strtol(v, &end, 10);
    if (*v == '\0' || *end != '\0' || errno == ERANGE)
        return bench_opt_fail(c, "'%s' is not an integer", v);
    if (x < lo || x > hi) {
        if (lo == 1 && x < 1) return bench_opt_fail(c, "'%s' is not a positive integer", v);
        if (lo == 0 && x < 0) return bench_opt_fail(c, "'%s' must not be negative", v);
        return bench_opt_fail(c, "%ld is out of range [%ld, %ld]", x, lo, hi);
    }
    *out = x;
    return 0;
}

int bench_opt_int(bench_opt_ctx *c, const char *v, long lo, long hi, int *out)
{
    long x = 0;
    int rc = bench_opt_long(c, v, lo, hi, &x);
    if (rc == 0) *out = (int)x;
    return rc;
}

int bench_opt_u64(bench_opt_ctx *c, const char *v, uint64_t *out)
{
    char *end;
    errno = 0;
    unsigned long long x = strtoull(v, &end, 0);
    if (*v == '\0' || *v == '-' || *end != '\0' || errno == ERANGE)
        return bench_opt_fail(c, "'%s' is not a non-negative integer", v);
    *out = x;
    return 0;
}

int bench_opt_double(bench_opt_ctx *c, const char *v, double lo, int lo_open, double hi,
                     int hi_open, double *out)
{
    char *end;
    double x = strtod(v, &end);
    if (*v == '\0' || *end != '\0' || !isfinite(x))
        return bench_opt_fail(c, "'%s' is not a number", v);
    int below = lo_open ? !(x > lo) : !(x >= lo), above = hi_open ? !(x < hi) : !(x <= hi);
    if (below && isinf(hi))
        return lo_open ? bench_opt_fail(c, "'%s' must be more than %g", v, lo)
                       : bench_opt_fail(c, "'%s' must be %g or more", v, lo);
    if (below || above)
        return bench_opt_fail(c, "'%s' must be in %c%.10g, %.10g%c", v, lo_open ? '(' : '[', lo, hi,
                              hi_open ? ')' : ']');
    *out = x;
    return 0;
}

int bench_opt_size(bench_opt_ctx *c, const char *v, uint64_t *out)
{
    char why[128];
    if (bench_parse_size(v, out, why, sizeof why) != 0) return bench_opt_fail(c, "%s", why);
    if (*out == 0) return bench_opt_fail(c, "'%s': a size must be at least 1 byte", v);
    return 0;
}

int bench_opt_procs(bench_opt_ctx *c, const char *v, int max, int **out, size_t *n)
{
    char why[128];
    free(*out);
    *out = NULL;
    *n = 0;
    if (bench_parse_int_list(v, out, n, why, sizeof why) != 0) return bench_opt_fail(c, "%s", why);
    for (size_t i = 0; i < *n; i++)
        if ((*out)[i] > max)
            return bench_opt_fail(c, "%d processes is more than %d", (*out)[i], max);
    return 0;
}

int bench_opt_text(bench_opt_ctx *c, const char *v, char *dst, size_t len)
{
    size_t n = strlen(v);
    if (n >= len) return bench_opt_fail(c, "'%s' is too long", v);
    memcpy(dst, v, n + 1);
    return 0;
}

int bench_opt_file(bench_opt_ctx *c, const char *v, const char **out)
{
    if (*v == '\0') return bench_opt_fail(c, "empty file name");
    *out = v;
    return 0;
}

/* ---- lists ---- */

/* The same item twice: the same text, or (unkeyed) the same size or count
 * written two ways ("1K" and "1024", "2" and "02"). */
typedef struct list_item {
    const char *text;
    size_t len; /* of the text, or of the key before '=' */
    int has_value;
    uint64_t value;
} list_item;

static int same_item(const list_item *a, const list_item *b)
{
    if (a->len == b->len && strncmp(a->text, b->text, a->len) == 0) return 1;
    return a->has_value && b->has_value && a->value == b->value;
}

int bench_list_check(const char *list, int keyed, char *err, size_t errlen)
{
    size_t cap = 1, n = 0;
    for (const char *p = list; *p; p++) cap += *p == ',';
    if (cap > BENCH_LIST_MAX_ITEMS) return 0; /* the parsers refuse such lists by length */
    list_item *items = calloc(cap, sizeof *items);
    if (!items) return coll__set_err_keep_end(err, errlen, "out of memory"), COLL_ENOMEM;
    int rc = 0;
    for (const char *p = list;; p++) {
        size_t len = strcspn(p, ",");
        const char *t = p, *e = p + len;
        while (t < e && (*t == ' ' || *t == '\t')) t++;
        while (e > t && (e[-1] == ' ' || e[-1] == '\t')) e--;
        list_item *it = &items[n++];
        *it = (list_item){.text = t, .len = (size_t)(e - t)};
        if (it->len == 0) {
            if (cap == 1) coll__set_err_keep_end(err, errlen, "empty list");
            else coll__set_err_keep_end(err, errlen, "item %zu of '%s' is empty", n, list);
            rc = COLL_EINVAL;
            break;
        }
        if (keyed) {
            it->len = strcspn(t, "=,");
            if (it->len > (size_t)(e - t)) it->len = (size_t)(e - t);
        } else if (it->len < 64) {
            char one[64], why[8];
            snprintf(one, sizeof one, "%.*s", (int)it->len, t);
            it->has_value = bench_parse_size(one, &it->value, why, sizeof why) == 0;
        }
        for (size_t j = 0; j + 1 < n; j++)
            if (same_item(&items[j], it)) {
                if (keyed)
                    coll__set_err_keep_end(err, errlen, "%.*s= is given twice in '%s'",
                                           (int)it->len, t, list);
                else if (items[j].len == it->len && !strncmp(items[j].text, t, it->len))
                    coll__set_err_keep_end(err, errlen, "'%.*s' is given twice in '%s'",
                                           (int)it->len, t, list);
                else
                    coll__set_err_keep_end(err, errlen, "'%.*s' and '%.*s' are the same in '%s'",
                                           (int)items[j].len, items[j].text, (int)it->len, t, list);
                rc = COLL_EINVAL;
                break;
            }
        if (rc || !p[len]) break;
        p += len;
    }
    free(items);
    return rc;
}

/* ---- the table ---- */

static int is_heading(const bench_opt *d) { return !d->shortname && !d->longname; }

const bench_opt *bench_opt_find(const bench_opt *table, size_t n, const char *arg)
{
    if (arg[0] != '-' || arg[1] == '\0') return NULL;
    if (arg[1] == '-') {
        const char *name = arg + 2;
        size_t len = strcspn(name, "=");
        for (size_t i = 0; i < n; i++)
            if (table[i].longname && strlen(table[i].longname) == len &&
                strncmp(table[i].longname, name, len) == 0)
                return &table[i];
        return NULL;
    }
    for (size_t i = 0; i < n; i++)
        if (table[i].shortname && table[i].shortname == arg[1]) {
            if (arg[2] != '\0' && !table[i].metavar) return NULL; /* "-qx" */
            return &table[i];
        }
    return NULL;
}

/* The value of argv[*i] for a flag that takes one: glued on ("-n5", "--iters=5")
 * or the next argument. NULL when it is missing (optional ones: not given). */
static const char *value_of(int argc, char **argv, int *i, int optional)
{
    const char *a = argv[*i];
    if (a[1] == '-') {
        const char *eq = strchr(a, '=');
        if (eq) return eq + 1;
    } else if (a[2] != '\0') {
        return a + 2;
    }
    if (optional || *i + 1 >= argc) return NULL;
    return argv[++*i];
}

/* "--master-addr" of "--master-addr=x", as multinode_opts.c wants it. */
static int multinode(bench_opt_ctx *c, int argc, char **argv, int *i)
{
    const char *a = argv[*i];
    char flag[40];
    snprintf(flag, sizeof flag, "%.*s", (int)strcspn(a, "="), a);
    c->flag = flag;
    const char *v = value_of(argc, argv, i, 0);
    int rc = v ? (bench_multinode_flag(c->mn, flag, v, c->err, c->errlen) < 0 ? COLL_EINVAL : 0)
               : bench_opt_fail(c, "missing value");
    c->flag = NULL;
    return rc;
}

static int parse_one(bench_opt_ctx *c, int argc, char **argv, int *i)
{
    const char *arg = argv[*i];
    const bench_opt *d = bench_opt_find(c->table, c->n, arg);
    if (!d && c->mn && strncmp(arg, "--", 2) == 0 && bench_multinode_is_flag(arg))
        return multinode(c, argc, argv, i);
    if (!d) {
        if (arg[0] == '-' && arg[1] != '\0') {
            char flag[64];
            snprintf(flag, sizeof flag, "%.*s", (int)strcspn(arg, "="), arg);
            c->flag = flag;
            int rc = bench_opt_fail(c, "unknown flag (see --help)");
            c->flag = NULL;
            return rc;
        }
        if (c->positional) return c->positional(c, arg);
        snprintf(c->err, c->errlen, "unexpected argument '%s' (see --help)", arg);
        return COLL_EINVAL;
    }
    /* messages name the flag as typed, without its value: "-b", "--minbytes" */
    char flag[48];
    if (arg[1] != '-') snprintf(flag, sizeof flag, "-%c", d->shortname);
    else snprintf(flag, sizeof flag, "--%s", d->longname);
    c->flag = flag;
    int rc;
    if (!d->metavar) {
        rc = arg[1] == '-' && strchr(arg, '=') ? bench_opt_fail(c, "takes no value")
                                               : d->fn(c, NULL);
    } else {
        int optional = d->metavar[0] == '[';
        const char *v = value_of(argc, argv, i, optional);
        char why[256];
        if (!v && !optional) rc = bench_opt_fail(c, "missing value (%s)", d->metavar);
        /* every LIST flag of every command: one rule for its items */
        else if (v && !strcmp(d->metavar, "LIST") && bench_list_check(v, 0, why, sizeof why))
            rc = bench_opt_fail(c, "%s", why);
        else rc = d->fn(c, v);
    }
    c->flag = NULL;
    return rc;
}

int bench_opt_parse(bench_opt_ctx *c, int argc, char **argv)
{
    int rc = 0;
    for (int i = 1; i < argc && rc == 0; i++) rc = parse_one(c, argc, argv, &i);
    return rc;
}

void bench_opt_usage(FILE *f, const bench_opt *table, size_t n, int width)
{
    for (size_t i = 0; i < n; i++) {
        const bench_opt *d = &table[i];
        if (!d->help) continue;
        if (is_heading(d)) {
            fprintf(f, "%s\n", d->help);
            continue;
        }
        char left[64], name[40];
        const char *meta = d->metavar ? d->metavar : "";
        const char *sep = !d->metavar ? "" : d->metavar[0] == '[' ? "" : " ";
        if (d->shortname && d->longname)
            snprintf(name, sizeof name, "-%c, --%s", d->shortname, d->longname);
        else if (d->shortname) snprintf(name, sizeof name, "-%c", d->shortname);
        else snprintf(name, sizeof name, "    --%s", d->longname);
        snprintf(left, sizeof left, "%s%s%s", name, sep, meta);
        const char *h = d->help;
        size_t len = strcspn(h, "\n");
        fprintf(f, "  %-*s %.*s\n", width, left, (int)len, h);
        while (h[len] == '\n') {
            h += len + 1;
            len = strcspn(h, "\n");
            fprintf(f, "  %-*s %.*s\n", width, "", (int)len, h);
        }
    }
}
