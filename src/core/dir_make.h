/* Making the directory a run writes into, with its parents (mkdir -p). */
#ifndef COLL_DIR_MAKE_H
#define COLL_DIR_MAKE_H

#include <stddef.h>

/* Creates dir and every missing parent (mode 0777 before the umask); an
 * existing one is fine. 0, or -1 with "cannot create PATH: reason" in err (the
 * first component that could not be made) and errno set. */
int coll__dir_make(const char *dir, char *err, size_t errlen);

#endif
