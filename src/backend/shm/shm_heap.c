/* Per-rank shared heaps (see shm_heap.h). */
#include "backend/shm/shm_heap.h"
#include "coll.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define PAGE ((size_t)4096)

static char *map_fd(int fd, size_t bytes)
{
    /* NORESERVE: the heap is sparse; only pages a buffer touches use memory. */
    void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_NORESERVE, fd, 0);
    return p == MAP_FAILED ? NULL : p;
}

int coll__shm_heap_create(shm_heap *h, int n, int self, size_t bytes, coll__err *err)
{
    memset(h, 0, sizeof *h);
    h->n = n;
    h->self = self;
    h->bytes = bytes / PAGE * PAGE;
    h->fd = -1;
    pthread_mutex_init(&h->lock, NULL);
    h->map = calloc((size_t)n, sizeof *h->map);
    h->base = calloc((size_t)n, sizeof *h->base);
    h->blk = malloc(16 * sizeof *h->blk);
    if (!h->map || !h->base || !h->blk) {
        return coll__err_set(err, COLL_ENOMEM, "shm heap: out of memory");
    }
    h->capblk = 16;
    h->nblk = 1;
    h->blk[0] = (shm_heap_block){0, h->bytes, 0};
    h->fd = memfd_create("collbench-heap", MFD_CLOEXEC);
    if (h->fd < 0 || ftruncate(h->fd, (off_t)h->bytes) != 0) {
        return coll__err_set(err, COLL_ESYS, "shm heap: memfd of %zu bytes: %s", h->bytes,
                             strerror(errno));
    }
    h->map[self] = map_fd(h->fd, h->bytes);
    if (!h->map[self]) {
        return coll__err_set(err, COLL_ESYS, "shm heap: mmap of %zu bytes: %s", h->bytes,
                             strerror(errno));
    }
    h->base[self] = (uint64_t)(uintptr_t)h->map[self];
    return COLL_OK;
}

void coll__shm_heap_describe(const shm_heap *h, char *buf, size_t len)
{
    snprintf(buf, len, "%ld %d %llu", (long)getpid(), h->fd, (unsigned long long)h->base[h->self]);
}

int coll__shm_heap_attach(shm_heap *h, int r, const char *desc, coll__err *err)
{
    long pid = 0, fd = -1;
    unsigned long long base = 0;
    if (sscanf(desc, "%ld %ld %llu", &pid, &fd, &base) != 3 || fd < 0) {
        return coll__err_set(err, COLL_EPROTO, "shm heap: rank %d published '%s'", r, desc);
    }
    char path[64];
    snprintf(path, sizeof path, "/proc/%ld/fd/%ld", pid, fd);
    int f = open(path, O_RDWR | O_CLOEXEC);
    if (f < 0) {
        return coll__err_set(err, COLL_ESYS, "shm heap: cannot open rank %d's heap %s: %s", r, path,
                             strerror(errno));
    }
    h->map[r] = map_fd(f, h->bytes);
    close(f);
    if (!h->map[r]) {
        return coll__err_set(err, COLL_ESYS, "shm heap: cannot map rank %d's heap: %s", r,
                             strerror(errno));
    }
    h->base[r] = base;
    return COLL_OK;
}

void coll__shm_heap_seal(shm_heap *h)
{
    if (!h->map) return; /* never created */
    if (h->fd >= 0) close(h->fd);
    h->fd = -1;
}

void coll__shm_heap_destroy(shm_heap *h)
{
    if (!h->map) return; /* never created */
    coll__shm_heap_seal(h);
    for (int r = 0; h->map && r < h->n; r++) {
        /* Buffers not freed yet stay valid: our own heap is left mapped then. */
        if (h->map[r] && (r != h->self || h->live == 0)) munmap(h->map[r], h->bytes);
    }
    free(h->map);
    free(h->base);
    free(h->blk);
    pthread_mutex_destroy(&h->lock);
    memset(h, 0, sizeof *h);
}

/* Room for one more block record. */
static int grow(shm_heap *h)
{
    if (h->nblk < h->capblk) return 1;
    shm_heap_block *b = realloc(h->blk, 2 * h->capblk * sizeof *b);
    if (!b) return 0;
    h->blk = b;
    h->capblk *= 2;
    return 1;
}

void *coll__shm_heap_alloc(shm_heap *h, size_t bytes)
{
    if (!h->map || !h->map[h->self]) return NULL;
    size_t need = (bytes ? bytes + PAGE - 1 : PAGE) / PAGE * PAGE;
    void *p = NULL;
    pthread_mutex_lock(&h->lock);
    for (size_t i = 0; i < h->nblk && need >= bytes; i++) { /* first fit */
        shm_heap_block *b = &h->blk[i];
        if (b->used || b->len < need) continue;
        if (b->len > need) {
            if (!grow(h)) break;
            b = &h->blk[i];
            memmove(&h->blk[i + 2], &h->blk[i + 1], (h->nblk - i - 1) * sizeof *b);
            h->blk[i + 1] = (shm_heap_block){b->off + need, b->len - need, 0};
            h->nblk++;
            b->len = need;
        }
        b->used = 1;
        h->live++;
        p = h->map[h->self] + b->off;
        break;
    }
    pthread_mutex_unlock(&h->lock);
    return p;
}

int coll__shm_heap_free(shm_heap *h, void *ptr)
{
    char *mine = h->map ? h->map[h->self] : NULL;
    if (!mine || (char *)ptr < mine || (char *)ptr >= mine + h->bytes) return 0;
    size_t off = (size_t)((char *)ptr - mine);
    pthread_mutex_lock(&h->lock);
    for (size_t i = 0; i < h->nblk; i++) {
        shm_heap_block *b = &h->blk[i];
        if (b->off != off || !b->used) continue;
        /* Give the memory back now; every peer's mapping sees zeros there. */
        (void)madvise(mine + b->off, b->len, MADV_REMOVE);
        b->used = 0;
        h->live--;
        if (i + 1 < h->nblk && !h->blk[i + 1].used) { /* merge with the next */
            b->len += h->blk[i + 1].len;
            memmove(&h->blk[i + 1], &h->blk[i + 2], (h->nblk - i - 2) * sizeof *b);
            h->nblk--;
        }
        if (i > 0 && !h->blk[i - 1].used) { /* and the previous */
            h->blk[i - 1].len += b->len;
            memmove(&h->blk[i], &h->blk[i + 1], (h->nblk - i - 1) * sizeof *b);
            h->nblk--;
        }
        break;
    }
    pthread_mutex_unlock(&h->lock);
    return 1;
}

void *coll__shm_heap_peer(const shm_heap *h, int r, uint64_t addr, size_t bytes)
{
    if (!h->map || !h->map[r] || addr < h->base[r]) return NULL;
    uint64_t off = addr - h->base[r];
    if (off > h->bytes || bytes > h->bytes - off) return NULL;
    return h->map[r] + off;
}
