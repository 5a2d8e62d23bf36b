/* The communicator's shared segment (see shm_segment.h). */
#include "backend/shm/shm_segment.h"
#include "coll.h"
#include "core/fault.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define PAGE 4096

static size_t round_up(size_t x, size_t a) { return (x + a - 1) / a * a; }

/* Offsets of each area; the same arithmetic on every rank. */
static size_t layout(shm_segment *s, int n, size_t slot_bytes, size_t mbox_bytes, size_t off[4])
{
    size_t o = round_up(sizeof(shm_header), SHM_LINE);
    off[0] = o; /* ctrl */
    o = round_up(o + (size_t)n * sizeof(shm_rank_ctrl), SHM_LINE);
    off[1] = o; /* mailboxes */
    o = round_up(o + (size_t)n * (size_t)n * sizeof(shm_mailbox), PAGE);
    off[2] = o; /* staging slots */
    o += (size_t)n * 2 * slot_bytes;
    off[3] = o; /* mailbox buffers */
    o += (size_t)n * (size_t)n * mbox_bytes;
    s->slot_bytes = slot_bytes;
    s->mbox_bytes = mbox_bytes;
    return round_up(o, PAGE);
}

static void point_areas(shm_segment *s, const size_t off[4])
{
    char *b = s->base;
    s->hdr = (shm_header *)b;
    s->ctrl = (shm_rank_ctrl *)(b + off[0]);
    s->mbox = (shm_mailbox *)(b + off[1]);
    s->stage = b + off[2];
    s->mdata = b + off[3];
}

int coll__shm_segment_barrier(coll__store *store, const char *prefix, const char *name, int rank,
                              int nranks, coll__err *err)
{
    char key[160];
    int rc = coll__store_key(key, sizeof key, err, prefix, "shm/%s/%d", name, rank);
    if (!rc) rc = coll__store_set(store, key, "1", 1);
    for (int r = 0; rc == COLL_OK && r < nranks; r++) {
        if ((rc = coll__store_key(key, sizeof key, err, prefix, "shm/%s/%d", name, r))) break;
        const char *keys[1] = {key};
        rc = coll__store_wait(store, keys, 1);
        if (rc)
            coll__err_blame(err, 0, r, "shm set-up (%s): rank %d never arrived: %s", name,
                            coll__err_world(err, r),
                            store->err.msg[0] ? store->err.msg : coll_strerror(rc));
    }
    if (rc && !err->msg[0])
        coll__err_set(err, 0, "shm set-up (%s): store: %s", name, store->err.msg);
    return rc;
}

/* Rank 0: a fresh memfd of the right size, mapped. */
static int create_memfd(shm_segment *s, int *fd, coll__err *err)
{
    *fd = memfd_create("collbench-shm", MFD_CLOEXEC);
    if (*fd < 0) {
        return coll__err_set(err, COLL_ESYS, "shm: memfd_create: %s", strerror(errno));
    }
    if (ftruncate(*fd, (off_t)s->bytes) != 0) {
        return coll__err_set(err, COLL_ESYS, "shm: cannot size the segment to %zu bytes: %s",
                             s->bytes, strerror(errno));
    }
    return COLL_OK;
}

/* Other ranks: rank 0's descriptor through /proc (needs the same user; no name
 * ever exists in /dev/shm). */
static int open_peer_memfd(shm_segment *s, const char *desc, int *fd, coll__err *err)
{
    long pid = 0, pfd = -1;
    unsigned long long bytes = 0;
    if (sscanf(desc, "%ld %ld %llu", &pid, &pfd, &bytes) != 3 || bytes != s->bytes) {
        return coll__err_set(err, COLL_EPROTO,
                             "shm: rank 0 published segment '%s', expected %zu bytes", desc,
                             s->bytes);
    }
    char path[64];
    snprintf(path, sizeof path, "/proc/%ld/fd/%ld", pid, pfd);
    *fd = open(path, O_RDWR | O_CLOEXEC);
    if (*fd < 0) {
        return coll__err_set(err, COLL_ESYS,
                             "shm: cannot open rank 0's segment %s: %s (ranks must run as "
                             "the same user on one host)",
                             path, strerror(errno));
    }
    struct stat sb;
    if (fstat(*fd, &sb) != 0 || (size_t)sb.st_size != s->bytes) {
        return coll__err_set(err, COLL_EPROTO, "shm: %s is not rank 0's segment (size mismatch)",
                             path);
    }
    return COLL_OK;
}

int coll__shm_segment_create(shm_segment *s, coll__store *store, const char *prefix, int rank,
                             int nranks, size_t slot_bytes, size_t mbox_bytes, uint64_t probe_addr,
                             uint64_t probe_value, coll__err *err)
{
    size_t off[4];
    memset(s, 0, sizeof *s);
    s->rank = rank;
    s->nranks = nranks;
    s->bytes = layout(s, nranks, slot_bytes, mbox_bytes, off);
    char key[160], desc[96];
    int fd = -1, rc = coll__store_key(key, sizeof key, err, prefix, "shm/segment");
    if (rc) return rc;
    if (rank == 0) {
        rc = create_memfd(s, &fd, err);
    } else {
        void *val = NULL;
        size_t len = 0;
        rc = coll__store_get(store, key, &val, &len);
        if (rc)
            coll__err_set(err, 0, "shm: rank 0 never published its segment: %s",
                          store->err.msg[0] ? store->err.msg : coll_strerror(rc));
        else rc = open_peer_memfd(s, (const char *)val, &fd, err);
        free(val);
    }
    if (rc == COLL_OK) {
        s->base = mmap(NULL, s->bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        if (s->base == MAP_FAILED) {
            s->base = NULL;
            coll__err_set(err, 0, "shm: mmap of %zu bytes: %s", s->bytes, strerror(errno));
            rc = COLL_ESYS;
        }
    }
    if (rc == COLL_OK) {
        point_areas(s, off);
        if (rank == 0) { /* the file is all zeros: only the constants to write */
            s->hdr->magic = SHM_MAGIC;
            s->hdr->nranks = nranks;
            s->hdr->slot_bytes = slot_bytes;
            s->hdr->mbox_bytes = mbox_bytes;
            s->hdr->total_bytes = s->bytes;
            snprintf(desc, sizeof desc, "%ld %d %zu", (long)getpid(), fd, s->bytes);
            rc = coll__store_set(store, key, desc, strlen(desc));
            if (rc) coll__err_set(err, 0, "shm: cannot publish the segment: %s", store->err.msg);
        } else if (s->hdr->magic != SHM_MAGIC || s->hdr->nranks != nranks) {
            coll__err_set(err, 0, "shm: rank 0's segment is for %d ranks, not %d",
                          (int)s->hdr->nranks, nranks);
            rc = COLL_EPROTO;
        }
    }
    if (rc == COLL_OK) {
        shm_rank_ctrl *me = &s->ctrl[rank];
        me->pid = (int32_t)getpid();
        me->probe_addr = probe_addr;
        me->probe_value = probe_value;
        /* This rank's part is published: shm's "connect" fault point. */
        coll__fault_hit(COLL_FAULT_CONNECT, 0);
        /* Everyone mapped: rank 0's descriptor is no longer needed by anyone. */
        rc = coll__shm_segment_barrier(store, prefix, "mapped", rank, nranks, err);
    }
    if (fd >= 0) close(fd);
    if (rc) coll__shm_segment_unmap(s);
    return rc;
}

void coll__shm_segment_unmap(shm_segment *s)
{
    if (s->base) munmap(s->base, s->bytes);
    s->base = NULL;
}
