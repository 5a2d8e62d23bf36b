/* Opening an optional shared library at run time (CUDA runtime, NCCL): the
 * path in an environment variable if set, else the first soname that loads. */
#ifndef COLL_DLOPEN_LIB_H
#define COLL_DLOPEN_LIB_H

#include <stddef.h>

typedef struct coll_lib_spec {
    const char *what;               /* "CUDA runtime", "NCCL" */
    const char *env;                /* variable naming the file to load instead */
    const char *const *sonames;     /* tried in order; NULL-terminated */
    const char *install_hint;       /* "pip install nvidia-nccl-cu12 or apt install libnccl2" */
} coll_lib_spec;

/* The dlopen handle, with the name that loaded in soname; NULL with err saying
 * what was tried and how to get the library. */
void *coll_dlopen_lib(const coll_lib_spec *spec, char *soname, size_t sonamelen, char *err,
                      size_t errlen);

#endif
