/* Steps' command lines and which backends the suite sweeps. */
#include "suite.h"

#include <stdarg.h>
#include <string.h>

#include "cli_launch.h"
#include "coll_tool.h"

int suite_step_arg(suite_step *step, const char *fmt, ...)
{
    if (step->argc >= SUITE_MAX_ARGS) return -1;
    size_t room = sizeof step->strings - step->used;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(step->strings + step->used, room, fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n >= room) return -1;
    step->argv[step->argc++] = step->strings + step->used;
    step->argv[step->argc] = NULL;
    step->used += (size_t)n + 1;
    return 0;
}

/* Why this backend cannot run here, or NULL. mpi runs through mpirun. bare:
 * without "backend NAME unavailable: " (the caller names it). */
static const char *cannot_run(const char *name, char *why, size_t len, int bare)
{
    cli_launch_plan here; /* the suite's steps run on this host */
    if (!(bare ? coll_backend_available_bare(name, why, len)
               : coll_backend_available(name, why, len)))
        return why;
    cli_plan_choose(&here, NULL);
    return cli_plan_refuses(&here, name, why, len);
}

static int pick_listed(const char *list, char out[][16], size_t cap, size_t *n)
{
    char copy[256], *save = NULL, why[512];
    if (strlen(list) >= sizeof copy) {
        fprintf(stderr, "collbench suite: --backend: '%s' is too long\n", list);
        return EXIT_USAGE;
    }
    strcpy(copy, list);
    for (char *b = strtok_r(copy, ",", &save); b; b = strtok_r(NULL, ",", &save)) {
        if (!coll_backend_known(b) || strlen(b) >= 16) {
            fprintf(stderr, "collbench suite: --backend: unknown backend '%s'\n", b);
            return EXIT_USAGE;
        }
        if (cannot_run(b, why, sizeof why, 0)) {
            fprintf(stderr, "collbench suite: --backend %s: %s\n", b, why);
            return EXIT_UNAVAILABLE;
        }
        if (*n == cap) {
            fprintf(stderr, "collbench suite: --backend: more than %zu backends\n", cap);
            return EXIT_USAGE;
        }
        strcpy(out[(*n)++], b);
    }
    if (*n == 0) {
        fprintf(stderr, "collbench suite: --backend: no backend in '%s'\n", list);
        return EXIT_USAGE;
    }
    return 0;
}

int suite_pick_backends(const char *list, char out[][16], size_t cap, size_t *n, FILE *log)
{
    char why[512];
    *n = 0;
    if (list) return pick_listed(list, out, cap, n);
    for (const char *const *b = coll_backend_names(); *b && *n < cap; b++) {
        if (cannot_run(*b, why, sizeof why, 1)) {
            if (log) fprintf(log, "collbench suite: skipping backend %s: %s\n", *b, why);
            continue;
        }
        snprintf(out[(*n)++], 16, "%s", *b);
    }
    if (*n == 0) {
        fprintf(stderr, "collbench suite: no backend can run here\n");
        return EXIT_UNAVAILABLE;
    }
    return 0;
}
