/* Opening an optional shared library at run time (the CUDA runtime, a GPU collective library): the
 * path in an environment variable if set, else the first soname that loads. */
#ifndef COLL_DLOPEN_LIB_H
#define COLL_DLOPEN_LIB_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>

typedef struct coll__lib_spec {
    const char *what;           /* "CUDA runtime", ... */
    const char *env;            /* variable naming the file to load instead */
    const char *const *sonames; /* tried in order; NULL-terminated */
    const char *install_hint;   /* how to get it: the packages to install */
} coll__lib_spec;

/* The dlopen handle, with the name that loaded in soname; NULL with err saying
 * what was tried and how to get the library. */
void *coll__dlopen_lib(const coll__lib_spec *spec, char *soname, size_t sonamelen, char *err,
                       size_t errlen);

/* A library opened once per process, at first use, from any thread: the
 * caller's function table (which holds the soname buffer) filled by bind().
 * A failed load is remembered: later calls give the same reason. */
typedef struct coll__lazy_lib {
    const coll__lib_spec *spec;
    void *table; /* cleared on unload */
    size_t table_size;
    char *soname; /* inside table */
    size_t sonamelen;
    /* Fill table from handle and check it (versions); 0, or -1 with err. */
    int (*bind)(void *handle, char *err, size_t errlen);
    pthread_mutex_t lock;
    void *handle;           /* under lock */
    int tried;              /* under lock */
    char error[512];        /* why the load failed, once tried */
    _Atomic(void *) loaded; /* table, once bound */
} coll__lazy_lib;

#define COLL_LAZY_LIB(spec_, table_, bind_)                                               \
    {                                                                                     \
        .spec = (spec_), .table = &(table_), .table_size = sizeof(table_),                \
        .soname = (table_).soname, .sonamelen = sizeof((table_).soname), .bind = (bind_), \
        .lock = PTHREAD_MUTEX_INITIALIZER                                                 \
    }

/* The table, or NULL with err saying why. */
void *coll__lazy_lib_load(coll__lazy_lib *l, char *err, size_t errlen);
/* The table when an earlier load succeeded, else NULL. Never loads. */
void *coll__lazy_lib_loaded(coll__lazy_lib *l);
/* Forget the load (tests only: nothing of the library may be in use). */
void coll__lazy_lib_unload(coll__lazy_lib *l);

#endif
