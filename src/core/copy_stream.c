/* Copies with streaming stores (copy_stream.h). */
#include "core/copy_stream.h"

#include <stdint.h>
#include <string.h>
#if defined(__x86_64__)
#include <emmintrin.h>
#endif

void coll__copy_stream(void *dst_, const void *src_, size_t bytes, int stream)
{
    char *dst = dst_;
    const char *src = src_;
#if defined(__x86_64__)
    if (stream) {
        size_t head = (16 - ((uintptr_t)dst & 15)) & 15;
        if (head > bytes) head = bytes;
        memcpy(dst, src, head);
        size_t i = head;
        for (; i + 64 <= bytes; i += 64) {
            __m128i a = _mm_loadu_si128((const __m128i *)(src + i));
            __m128i b = _mm_loadu_si128((const __m128i *)(src + i + 16));
            __m128i c = _mm_loadu_si128((const __m128i *)(src + i + 32));
            __m128i d = _mm_loadu_si128((const __m128i *)(src + i + 48));
            _mm_stream_si128((__m128i *)(dst + i), a);
            _mm_stream_si128((__m128i *)(dst + i + 16), b);
            _mm_stream_si128((__m128i *)(dst + i + 32), c);
            _mm_stream_si128((__m128i *)(dst + i + 48), d);
        }
        memcpy(dst + i, src + i, bytes - i);
        return;
    }
#else
    (void)stream;
#endif
    memcpy(dst, src, bytes);
}

void coll__store_fence(void)
{
#if defined(__x86_64__)
    _mm_sfence(); /* streaming stores are weakly ordered */
#endif
}
