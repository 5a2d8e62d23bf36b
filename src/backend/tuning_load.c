/* The tuning file loaded once per process, before any tuning variable is read
 * (every way into a backend asks first: the registry, the launcher's check,
 * `collbench info`), and installed whole under the environment
 * (core/tuning.h's layer). A file from another machine is ignored with one
 * warning naming the difference; a malformed one is refused whole, the file
 * and line named: libcoll then runs on its defaults (a library never exits),
 * and collbench's launcher makes it a usage error (coll_tuning_check). */
#include "backend/backends.h"
#include "coll_tool.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/machine_id.h"
#include "core/tuning_file.h"

static pthread_once_t once = PTHREAD_ONCE_INIT;
static coll__tuning_values values;
static int state = COLL_TUNING_FILE_NONE;
static char path[1024], why[2048];

static const coll__tunable *find(const char *name, void *arg)
{
    (void)arg;
    const coll__tunable *t;
    for (size_t i = 0; (t = coll__backend_knob(i)) != NULL; i++)
        if (strcmp(t->name, name) == 0) return t;
    return NULL;
}

int coll__tuning_load(const char *file, coll__tuning_values *out, char *msg, size_t msglen)
{
    coll__err err;
    coll__err_init(&err, NULL, 0);
    if (msg && msglen) msg[0] = 0;
    int rc = coll__tuning_file_read(file, find, NULL, out, &err);
    if (rc == 1) return COLL_TUNING_FILE_NONE; /* the defaults, silently */
    if (rc != COLL_OK) {
        snprintf(msg, msglen, "tuning file refused: %s", err.msg);
        return COLL_TUNING_FILE_REFUSED;
    }
    coll__machine_id here;
    char diff[400];
    coll__machine_id_here(&here);
    if (coll__machine_id_differs(&here, &out->machine, diff, sizeof diff)) {
        snprintf(msg, msglen,
                 "%s: measured on another machine (%s), ignored: run collbench "
                 "tune here",
                 file, diff);
        out->count = 0;
        return COLL_TUNING_FILE_FOREIGN;
    }
    return COLL_TUNING_FILE_APPLIED;
}

static void load(void)
{
    if (coll__tuning_file_path(path, sizeof path) != 0) {
        path[0] = 0;
        return;
    }
    state = coll__tuning_load(path, &values, why, sizeof why);
    /* Set by collbench's launcher for its ranks once it has said it. */
    int quiet = getenv("COLL__TUNING_QUIET") != NULL;
    if (state == COLL_TUNING_FILE_REFUSED && !quiet)
        fprintf(stderr, "coll: %s (the defaults apply)\n", why);
    if (state == COLL_TUNING_FILE_FOREIGN && !quiet) fprintf(stderr, "coll: warning: %s\n", why);
    if (state == COLL_TUNING_FILE_APPLIED) coll__tunable_layer_install(&values);
}

int coll_tuning_file(char *where, size_t wherelen, char *message, size_t messagelen)
{
    pthread_once(&once, load);
    if (where && wherelen) snprintf(where, wherelen, "%s", path);
    if (message && messagelen) snprintf(message, messagelen, "%s", why);
    return state;
}

void coll__tuning_ensure(void) { (void)coll_tuning_file(NULL, 0, NULL, 0); }
