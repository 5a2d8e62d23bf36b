/* Every component's tuning variables, gathered through the table of backends
 * (each entry's knobs, in the table's order): what `collbench info --tuning`
 * prints, README's list is and a launcher checks (coll_tool.h). */
#include "backend/backends.h"
#include "coll_tool.h"

#include <stdio.h>

const struct coll__tunable *coll_tuning_row(size_t i) { return coll__backend_knob(i); }

int coll_tuning_check(char *why, size_t whylen)
{
    char file_why[1024];
    if (coll_tuning_file(NULL, 0, file_why, sizeof file_why) == COLL_TUNING_FILE_REFUSED) {
        if (why && whylen) snprintf(why, whylen, "%s", file_why);
        return COLL_EINVAL;
    }
    const coll__tunable *t;
    for (size_t i = 0; (t = coll_tuning_row(i)) != NULL; i++) {
        coll__err err;
        coll__err_init(&err, NULL, 0);
        int rc = coll__tunable_check(t, &err);
        if (rc) {
            if (why && whylen) snprintf(why, whylen, "%s", err.msg);
            return rc;
        }
    }
    return COLL_OK;
}
