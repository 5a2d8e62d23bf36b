/* memcpy, with non-temporal stores on request: a large copy into memory
 * another process reads next then skips the read-for-ownership of the
 * destination and leaves the caches to the inputs. */
#ifndef COLL_COPY_STREAM_H
#define COLL_COPY_STREAM_H

#include <stddef.h>

/* With stream (x86-64), the caller fences before publishing what it wrote. */
void coll__copy_stream(void *dst, const void *src, size_t bytes, int stream);
/* Orders streaming stores before the stores that follow. */
void coll__store_fence(void);

#endif
