/* `collbench info --tuning`: libcoll's tuning variables (every component's
 * rows, coll_tool.h's coll_tuning_row) with the values in force here and
 * where they come from. */
#ifndef COLLBENCH_INFO_TUNING_H
#define COLLBENCH_INFO_TUNING_H

/* One line per variable: name, value, source (env or default), default,
 * meaning. A set variable that is not valid is named on stderr; returns 0,
 * or EXIT_USAGE when one is not valid. */
int info_tuning_print(void);
/* The table as README.md lists it (name, default, range, meaning): from the
 * defaults alone, whatever the environment (scripts/check_tuning_doc.sh). */
void info_tuning_print_markdown(void);

#endif
