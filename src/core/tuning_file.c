/* The tuning file read and checked: see tuning_file.h. */
#include "core/tuning_file.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coll.h"
#include "core/env.h"

int coll__tuning_file_path(char *path, size_t len)
{
    const char *f = getenv("COLL_TUNING_FILE"), *xdg = getenv("XDG_CONFIG_HOME"),
               *home = getenv("HOME");
    int n;
    if (f && *f) n = snprintf(path, len, "%s", f);
    else if (xdg && xdg[0] == '/') n = snprintf(path, len, "%s/collbench/tuning", xdg);
    else if (home && *home) n = snprintf(path, len, "%s/.config/collbench/tuning", home);
    else return -1;
    return n > 0 && (size_t)n < len ? 0 : -1;
}

static char *strip(char *s)
{
    while (*s == ' ' || *s == '\t') s++;
    size_t n = strlen(s);
    while (n && (s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == '\r')) s[--n] = 0;
    return s;
}

static int value_of(const coll__tunable *t, const char *text, uint64_t *out, coll__err *err)
{
    if (t->kind == COLL__TUNE_FLAG) {
        int on;
        int rc = coll__value_flag(t->name, text, &on, err);
        if (rc == COLL_OK) *out = (uint64_t)on;
        return rc;
    }
    if (t->kind == COLL__TUNE_BYTES)
        return coll__value_bytes(t->name, text, t->lo, t->hi, out, err);
    return coll__value_count(t->name, text, t->lo, t->hi, out, err);
}

/* machine.KEY = value: 0, or -1 for a key that is not one. */
static int machine_line(coll__tuning_values *out, const char *key, const char *v)
{
    coll__machine_id *m = &out->machine;
    char *end;
    if (strcmp(key, "cpu") == 0) snprintf(m->cpu, sizeof m->cpu, "%s", v);
    else if (strcmp(key, "flags") == 0) snprintf(m->flags, sizeof m->flags, "%s", v);
    else if (strcmp(key, "kernel") == 0) snprintf(m->kernel, sizeof m->kernel, "%s", v);
    else if (strcmp(key, "cores") == 0) {
        long c = strtol(v, &end, 10);
        if (!isdigit((unsigned char)*v) || *end || c < 1 || c > 1 << 20) return -1;
        m->cores = (int)c;
    } else if (strcmp(key, "copy_gbps") == 0) {
        out->copy_gbps = strtod(v, &end);
        if (!isdigit((unsigned char)*v) || *end || out->copy_gbps < 0) return -1;
    } else return -1;
    return 0;
}

/* One line (comments and blank lines already gone): COLL_OK or EINVAL. */
static int one_line(char *s, coll__tunable_lookup find, void *arg, coll__tuning_values *out,
                    coll__err *err)
{
    char *eq = strchr(s, '=');
    if (!eq) return coll__err_set(err, COLL_EINVAL, "not 'NAME = value': '%s'", s);
    *eq = 0;
    char *key = strip(s), *v = eq + 1;
    if (strncmp(key, "machine.", 8) != 0) {
        char *hash = strchr(v, '#'); /* a knob's value: its note after # */
        if (hash) *hash = 0;
    }
    v = strip(v);
    if (!*v) return coll__err_set(err, COLL_EINVAL, "%s has no value", key);
    if (strncmp(key, "machine.", 8) == 0) {
        if (machine_line(out, key + 8, v) != 0)
            return coll__err_set(err, COLL_EINVAL,
                                 "'%s = %s': not a machine field (cpu, flags, "
                                 "kernel, cores, copy_gbps) with its value",
                                 key, v);
        return COLL_OK;
    }
    const coll__tunable *t = find(key, arg);
    if (!t) return coll__err_set(err, COLL_EINVAL, "%s: no such tuning variable", key);
    for (size_t i = 0; i < out->count; i++)
        if (out->v[i].row == t) return coll__err_set(err, COLL_EINVAL, "%s given twice", key);
    if (out->count == COLL__TUNING_MAX_VALUES)
        return coll__err_set(err, COLL_EINVAL, "more than %d values", COLL__TUNING_MAX_VALUES);
    uint64_t x;
    int rc = value_of(t, v, &x, err);
    if (rc) return rc;
    out->v[out->count].row = t;
    out->v[out->count].value = x;
    out->count++;
    return COLL_OK;
}

static int header_check(const char *s, coll__err *err)
{
    if (strcmp(s, COLL__TUNING_HEADER) == 0) return COLL_OK;
    unsigned v;
    char extra;
    if (sscanf(s, "# collbench tuning v%u%c", &v, &extra) == 1)
        return coll__err_set(err, COLL_EINVAL, "version %u, this build reads version %d", v,
                             COLL__TUNING_VERSION);
    return coll__err_set(err, COLL_EINVAL,
                         "not a collbench tuning file (the first line is not "
                         "'" COLL__TUNING_HEADER "')");
}

int coll__tuning_parse(const char *text, const char *path, coll__tunable_lookup find, void *arg,
                       coll__tuning_values *out, coll__err *err)
{
    memset(out, 0, sizeof *out);
    char *copy = strdup(text);
    if (!copy) return coll__err_set(err, COLL_ENOMEM, "%s: out of memory", path);
    int rc = COLL_OK, lineno = 0, seen_header = 0;
    coll__err why;
    coll__err_init(&why, NULL, 0);
    for (char *line = copy, *next; line && rc == COLL_OK; line = next) {
        next = strchr(line, '\n');
        if (next) *next++ = 0;
        lineno++;
        char *s = strip(line);
        if (!seen_header) {
            rc = header_check(s, &why);
            seen_header = 1;
        } else if (*s && *s != '#') rc = one_line(s, find, arg, out, &why);
    }
    if (rc == COLL_OK && !seen_header) {
        lineno = 1;
        rc = header_check("", &why);
    }
    if (rc == COLL_OK && (!out->machine.cpu[0] || !out->machine.kernel[0])) {
        rc = coll__err_set(&why, COLL_EINVAL, "no machine.cpu or machine.kernel line");
        lineno = 0;
    }
    free(copy);
    if (rc == COLL_OK) return COLL_OK;
    memset(out, 0, sizeof *out);
    if (lineno) return coll__err_set(err, rc, "%s:%d: %s", path, lineno, why.msg);
    return coll__err_set(err, rc, "%s: %s", path, why.msg);
}

int coll__tuning_file_read(const char *path, coll__tunable_lookup find, void *arg,
                           coll__tuning_values *out, coll__err *err)
{
    memset(out, 0, sizeof *out);
    FILE *f = fopen(path, "r");
    if (!f) {
        if (errno == ENOENT) return 1;
        return coll__err_set(err, COLL_ESYS, "%s: %s", path, strerror(errno));
    }
    char *buf = malloc(COLL__TUNING_MAX_BYTES + 1);
    size_t n = buf ? fread(buf, 1, COLL__TUNING_MAX_BYTES + 1, f) : 0;
    int bad = ferror(f);
    fclose(f);
    if (!buf) return coll__err_set(err, COLL_ENOMEM, "%s: out of memory", path);
    int rc;
    if (bad) rc = coll__err_set(err, COLL_ESYS, "%s: read error", path);
    else if (n > COLL__TUNING_MAX_BYTES)
        rc = coll__err_set(err, COLL_EINVAL, "%s: larger than %d bytes", path,
                           COLL__TUNING_MAX_BYTES);
    else if (memchr(buf, 0, n)) rc = coll__err_set(err, COLL_EINVAL, "%s: not text", path);
    else {
        buf[n] = 0;
        rc = coll__tuning_parse(buf, path, find, arg, out, err);
    }
    free(buf);
    return rc;
}
