/* What the suite says of the tuning file before its steps: see suite.h. */
#include "suite.h"

#include <stdlib.h>

#include "coll_tool.h"
#include "exit_codes.h"

int suite_tuning_check(const char *prefix)
{
    char path[1024], why[2048];
    setenv("COLL__TUNING_QUIET", "1", 1); /* the steps' launchers and ranks: said here */
    if (coll_tuning_file(path, sizeof path, why, sizeof why) != COLL_TUNING_FILE_REFUSED) return 0;
    fprintf(stderr, "%s: %s\n", prefix, why);
    return EXIT_USAGE;
}

void suite_tuning_note(FILE *log)
{
    char path[1024], why[2048], line[3200];
    int state = coll_tuning_file(path, sizeof path, why, sizeof why);
    if (state == COLL_TUNING_FILE_NONE)
        snprintf(line, sizeof line,
                 "collbench suite: no tuning file for this machine (%s): the built-in "
                 "defaults; `collbench tune` measures this machine's (3 minutes)",
                 *path ? path : "no HOME");
    else if (state == COLL_TUNING_FILE_FOREIGN)
        snprintf(line, sizeof line, "collbench suite: warning: %s", why);
    else snprintf(line, sizeof line, "collbench suite: tuning file %s in force", path);
    if (state != COLL_TUNING_FILE_APPLIED) fprintf(stderr, "%s\n", line);
    if (log) fprintf(log, "%s\n", line);
}
