/* collbench info --tuning [--markdown]: see info_tuning.h. */
#include "info_tuning.h"

#include <stdio.h>
#include <stdlib.h>

#include "core/tuning.h"
#include "coll.h"
#include "exit_codes.h"

static void range_text(const coll__tunable *t, char *buf, size_t len)
{
    char lo[32], hi[32];
    if (t->kind == COLL__TUNE_FLAG) {
        snprintf(buf, len, "0 or 1");
        return;
    }
    coll__tunable_format(t, t->lo, lo, sizeof lo);
    if (t->hi >= (UINT64_MAX >> 1)) snprintf(buf, len, "%s or more", lo);
    else {
        coll__tunable_format(t, t->hi, hi, sizeof hi);
        snprintf(buf, len, "%s to %s", lo, hi);
    }
}

int info_tuning_print(void)
{
    size_t n;
    const coll__tunable *t = coll__tunables(&n);
    int bad = 0;
    printf("%-27s %-12s %-7s %-38s %s\n", "variable", "value", "source", "default", "meaning");
    for (size_t i = 0; i < n; i++) {
        char value[48] = "", dflt[80];
        const char *set = getenv(t[i].name), *source = set && *set ? "env" : "default";
        coll__tunable_format_default(&t[i], dflt, sizeof dflt);
        if (set && *set) {
            uint64_t v;
            coll__err err;
            coll__err_init(&err, NULL, 0);
            if (coll__tunable_read(t[i].name, 0, 0, &v, &err) == COLL_OK)
                coll__tunable_format(&t[i], v, value, sizeof value);
            else {
                fprintf(stderr, "collbench info: %s\n", err.msg);
                snprintf(value, sizeof value, "invalid");
                bad = 1;
            }
        } else {
            /* A conditional default depends on the communicator: the rule. */
            coll__tunable_format(&t[i], t[i].dflt, value, sizeof value);
            if (t[i].when != COLL__TUNE_ALWAYS) snprintf(value, sizeof value, "see default");
        }
        printf("%-27s %-12s %-7s %-38s %s\n", t[i].name, value, source, dflt, t[i].meaning);
    }
    return bad ? EXIT_USAGE : 0;
}

void info_tuning_print_markdown(void)
{
    size_t n;
    const coll__tunable *t = coll__tunables(&n);
    printf("| variable | default | range | meaning |\n|---|---|---|---|\n");
    for (size_t i = 0; i < n; i++) {
        char dflt[80], range[96];
        coll__tunable_format_default(&t[i], dflt, sizeof dflt);
        range_text(&t[i], range, sizeof range);
        printf("| `%s` | %s | %s | %s |\n", t[i].name, dflt, range, t[i].meaning);
    }
}
