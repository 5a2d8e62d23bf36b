/* The auto backend's job thread (auto_pipe.h). */
#include "backend/auto/auto_pipe.h"

#include <pthread.h>
#include <stdlib.h>

typedef struct job {
    auto_pipe_fn fn;
    void *arg;
} job;

struct auto_pipe {
    pthread_t thread;
    pthread_mutex_t lock;
    pthread_cond_t posted, done_cv;
    job ring[AUTO_PIPE_DEPTH];
    uint64_t next; /* ticket of the next job posted */
    uint64_t done; /* jobs run so far: tickets 1..done */
    int stop;
};

static void *loop(void *arg)
{
    auto_pipe *p = arg;
    pthread_mutex_lock(&p->lock);
    for (;;) {
        while (p->done + 1 == p->next && !p->stop) pthread_cond_wait(&p->posted, &p->lock);
        if (p->done + 1 == p->next) break; /* stop, and nothing left */
        job j = p->ring[p->done % AUTO_PIPE_DEPTH];
        pthread_mutex_unlock(&p->lock);
        j.fn(j.arg);
        pthread_mutex_lock(&p->lock);
        p->done++;
        pthread_cond_broadcast(&p->done_cv);
    }
    pthread_mutex_unlock(&p->lock);
    return NULL;
}

auto_pipe *coll__auto_pipe_start(void)
{
    auto_pipe *p = calloc(1, sizeof *p);
    if (!p) return NULL;
    p->next = 1;
    pthread_mutex_init(&p->lock, NULL);
    pthread_cond_init(&p->posted, NULL);
    pthread_cond_init(&p->done_cv, NULL);
    if (pthread_create(&p->thread, NULL, loop, p) != 0) {
        pthread_cond_destroy(&p->done_cv);
        pthread_cond_destroy(&p->posted);
        pthread_mutex_destroy(&p->lock);
        free(p);
        return NULL;
    }
    return p;
}

void coll__auto_pipe_stop(auto_pipe *p)
{
    if (!p) return;
    pthread_mutex_lock(&p->lock);
    p->stop = 1;
    pthread_cond_signal(&p->posted);
    pthread_mutex_unlock(&p->lock);
    pthread_join(p->thread, NULL);
    pthread_cond_destroy(&p->done_cv);
    pthread_cond_destroy(&p->posted);
    pthread_mutex_destroy(&p->lock);
    free(p);
}

uint64_t coll__auto_pipe_post(auto_pipe *p, auto_pipe_fn fn, void *arg)
{
    pthread_mutex_lock(&p->lock);
    /* The caller waits before it posts past the depth; this only guards it. */
    while (p->next - 1 - p->done >= AUTO_PIPE_DEPTH) pthread_cond_wait(&p->done_cv, &p->lock);
    uint64_t t = p->next++;
    p->ring[(t - 1) % AUTO_PIPE_DEPTH] = (job){fn, arg};
    pthread_cond_signal(&p->posted);
    pthread_mutex_unlock(&p->lock);
    return t;
}

void coll__auto_pipe_wait(auto_pipe *p, uint64_t ticket)
{
    pthread_mutex_lock(&p->lock);
    while (p->done < ticket) pthread_cond_wait(&p->done_cv, &p->lock);
    pthread_mutex_unlock(&p->lock);
}
