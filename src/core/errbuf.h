/* Text error buffers above libcoll (bench, train, report, tools): the helper
 * behind their "char *err, size_t errlen" out-parameters. Inside libcoll errors
 * travel as one value, core/err.h. */
#ifndef COLL_ERRBUF_H
#define COLL_ERRBUF_H

#include <stdarg.h>
#include <stddef.h>

/* printf into err (NULL or errlen 0: nothing), cut at its end where too long. */
__attribute__((format(printf, 3, 4))) void coll__set_err(char *err, size_t errlen, const char *fmt,
                                                         ...);

/* The same for a message that echoes what the user typed: one too long for
 * err loses its middle, not its end, since the echoed argument sits in the
 * middle and the reason at the end ("size '999...999': too large"). */
__attribute__((format(printf, 3, 4))) void coll__set_err_keep_end(char *err, size_t errlen,
                                                                  const char *fmt, ...);
__attribute__((format(printf, 3, 0))) void coll__vset_err_keep_end(char *err, size_t errlen,
                                                                   const char *fmt, va_list ap);

#endif
