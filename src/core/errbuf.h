/* Text error buffers above libcoll (bench, train, report, tools): the helper
 * behind their "char *err, size_t errlen" out-parameters. Inside libcoll errors
 * travel as one value, core/err.h. */
#ifndef COLL_ERRBUF_H
#define COLL_ERRBUF_H

#include <stddef.h>

/* printf into err (NULL or errlen 0: nothing). */
__attribute__((format(printf, 3, 4)))
void coll__set_err(char *err, size_t errlen, const char *fmt, ...);

#endif
