/* collbench info --tuning [--markdown]: see info_tuning.h. */
#include "info_tuning.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/tuning.h"
#include "coll.h"
#include "coll_tool.h"
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
    char path[1024], why[1024];
    int file = coll_tuning_file(path, sizeof path, why, sizeof why); /* says why itself */
    int bad = file == COLL_TUNING_FILE_REFUSED;
    printf("%-27s %-12s %-7s %-38s %s\n", "variable", "value", "source", "default", "meaning");
    for (size_t i = 0; coll_tuning_row(i); i++) {
        const coll__tunable *row = coll_tuning_row(i);
        char value[48] = "", dflt[80];
        const char *source = coll__tunable_source(row);
        coll__tunable_format_default(row, dflt, sizeof dflt);
        uint64_t v;
        coll__err err;
        coll__err_init(&err, NULL, 0);
        if (coll__tunable_read(row, 0, 0, &v, &err) != COLL_OK) {
            fprintf(stderr, "collbench info: %s\n", err.msg);
            snprintf(value, sizeof value, "invalid");
            bad = 1;
        } else if (strcmp(source, "default") == 0 && row->when != COLL__TUNE_ALWAYS) {
            /* A conditional default depends on the communicator: the rule. */
            snprintf(value, sizeof value, "see default");
        } else coll__tunable_format(row, v, value, sizeof value);
        printf("%-27s %-12s %-7s %-38s %s\n", row->name, value, source, dflt, row->meaning);
    }
    static const char *const states[] = {"none there, the defaults apply", "in force",
                                         "another machine's, ignored", "refused, ignored"};
    printf("\ntuning file: %s (%s)\n", *path ? path : "none (no HOME)", states[file]);
    return bad ? EXIT_USAGE : 0;
}

void info_tuning_print_markdown(void)
{
    printf("| variable | default | range | meaning |\n|---|---|---|---|\n");
    for (size_t i = 0; coll_tuning_row(i); i++) {
        const coll__tunable *row = coll_tuning_row(i);
        char dflt[80], range[96];
        coll__tunable_format_default(row, dflt, sizeof dflt);
        range_text(row, range, sizeof range);
        printf("| `%s` | %s | %s | %s |\n", row->name, dflt, range, row->meaning);
    }
}
