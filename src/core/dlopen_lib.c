/* See dlopen_lib.h. */
#include "core/dlopen_lib.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/errbuf.h"

void *coll__dlopen_lib(const coll__lib_spec *spec, char *soname, size_t sonamelen, char *err,
                       size_t errlen)
{
    const char *env = getenv(spec->env);
    if (env && *env) {
        void *h = dlopen(env, RTLD_NOW | RTLD_LOCAL);
        if (h) {
            snprintf(soname, sonamelen, "%s", env);
            return h;
        }
        const char *why = dlerror();
        snprintf(err, errlen,
                 "%s not found: %s=%s cannot be loaded (%s): point it at %s or unset it",
                 spec->what, spec->env, env, why ? why : "dlopen failed", spec->sonames[0]);
        return NULL;
    }
    char tried[256] = "";
    size_t used = 0;
    for (const char *const *n = spec->sonames; *n; n++) {
        void *h = dlopen(*n, RTLD_NOW | RTLD_LOCAL);
        if (h) {
            snprintf(soname, sonamelen, "%s", *n);
            return h;
        }
        int w = snprintf(tried + used, sizeof tried - used, "%s%s", used ? ", " : "", *n);
        if (w > 0 && (size_t)w < sizeof tried - used) used += (size_t)w;
    }
    snprintf(err, errlen, "%s not found (tried %s): %s, then set LD_LIBRARY_PATH or %s",
             spec->sonames[0], tried, spec->install_hint, spec->env);
    return NULL;
}

void *coll__lazy_lib_load(coll__lazy_lib *l, char *err, size_t errlen)
{
    void *done = atomic_load(&l->loaded);
    if (done) return done;
    pthread_mutex_lock(&l->lock);
    if (!l->tried) {
        l->tried = 1;
        l->handle = coll__dlopen_lib(l->spec, l->soname, l->sonamelen, l->error, sizeof l->error);
        if (l->handle && l->bind(l->handle, l->error, sizeof l->error) == 0) {
            atomic_store(&l->loaded, l->table);
        } else if (l->handle) {
            dlclose(l->handle);
            l->handle = NULL;
        }
    }
    done = atomic_load(&l->loaded);
    if (!done) coll__set_err(err, errlen, "%s", l->error);
    pthread_mutex_unlock(&l->lock);
    return done;
}

void *coll__lazy_lib_loaded(coll__lazy_lib *l) { return atomic_load(&l->loaded); }

void coll__lazy_lib_unload(coll__lazy_lib *l)
{
    pthread_mutex_lock(&l->lock);
    atomic_store(&l->loaded, NULL);
    if (l->handle) dlclose(l->handle);
    l->handle = NULL;
    l->tried = 0;
    l->error[0] = '\0';
    memset(l->table, 0, l->table_size);
    pthread_mutex_unlock(&l->lock);
}
