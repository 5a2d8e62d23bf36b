/* Per-group completion threads for a replay's calls in flight (replay_flight.h). */
#include "replay/replay_flight.h"

#include <pthread.h>
#include <stdlib.h>

#include "core/clock.h"

#define NONE ((size_t)-1)

typedef struct flight_group {
    replay_flight *f;
    pthread_t thread;
    pthread_cond_t work; /* a request was added, or stop */
    size_t head, tail;   /* the group's queued calls, linked by next[] */
    int started;
} flight_group;

struct replay_flight {
    pthread_mutex_t mu;
    pthread_cond_t ended; /* some call ended */
    size_t ncalls, ngroups;
    coll_request **req;
    size_t *next;
    double *done;
    int *rc;
    unsigned char *ended_flag;
    int stop;
    flight_group *groups;
};

replay_flight *replay_flight_new(size_t ncalls, size_t ngroups)
{
    replay_flight *f = calloc(1, sizeof *f);
    if (!f) return NULL;
    f->ncalls = ncalls, f->ngroups = ngroups;
    f->req = calloc(ncalls + 1, sizeof *f->req);
    f->next = calloc(ncalls + 1, sizeof *f->next);
    f->done = calloc(ncalls + 1, sizeof *f->done);
    f->rc = calloc(ncalls + 1, sizeof *f->rc);
    f->ended_flag = calloc(ncalls + 1, 1);
    f->groups = calloc(ngroups + 1, sizeof *f->groups);
    if (!f->req || !f->next || !f->done || !f->rc || !f->ended_flag || !f->groups) {
        free(f->req), free(f->next), free(f->done), free(f->rc), free(f->ended_flag);
        free(f->groups), free(f);
        return NULL;
    }
    pthread_mutex_init(&f->mu, NULL);
    pthread_cond_init(&f->ended, NULL);
    for (size_t g = 0; g < ngroups; g++) f->groups[g].head = f->groups[g].tail = NONE;
    return f;
}

static void *complete_loop(void *arg)
{
    flight_group *g = arg;
    replay_flight *f = g->f;
    pthread_mutex_lock(&f->mu);
    for (;;) {
        while (g->head == NONE && !f->stop) pthread_cond_wait(&g->work, &f->mu);
        if (g->head == NONE) break; /* stopped, nothing left */
        size_t call = g->head;
        coll_request *req = f->req[call];
        pthread_mutex_unlock(&f->mu);
        int rc = coll_wait(req);
        double done = coll__now_s();
        pthread_mutex_lock(&f->mu);
        f->req[call] = NULL;
        f->done[call] = done;
        f->rc[call] = rc;
        f->ended_flag[call] = 1;
        g->head = f->next[call];
        if (g->head == NONE) g->tail = NONE;
        pthread_cond_broadcast(&f->ended);
    }
    pthread_mutex_unlock(&f->mu);
    return NULL;
}

int replay_flight_add(replay_flight *f, size_t group, size_t call, coll_request *req)
{
    flight_group *g = &f->groups[group];
    pthread_mutex_lock(&f->mu);
    if (!g->started) {
        g->f = f;
        pthread_cond_init(&g->work, NULL);
        if (pthread_create(&g->thread, NULL, complete_loop, g) != 0) {
            pthread_cond_destroy(&g->work);
            pthread_mutex_unlock(&f->mu);
            int rc = coll_wait(req);
            double done = coll__now_s();
            pthread_mutex_lock(&f->mu);
            f->rc[call] = rc, f->done[call] = done, f->ended_flag[call] = 1;
            pthread_mutex_unlock(&f->mu);
            return COLL_ENOMEM;
        }
        g->started = 1;
    }
    f->req[call] = req;
    f->next[call] = NONE;
    if (g->tail == NONE) g->head = call;
    else f->next[g->tail] = call;
    g->tail = call;
    pthread_cond_signal(&g->work);
    pthread_mutex_unlock(&f->mu);
    return 0;
}

int replay_flight_wait(replay_flight *f, size_t call, double *done)
{
    pthread_mutex_lock(&f->mu);
    while (!f->ended_flag[call]) pthread_cond_wait(&f->ended, &f->mu);
    *done = f->done[call];
    int rc = f->rc[call];
    pthread_mutex_unlock(&f->mu);
    return rc;
}

void replay_flight_free(replay_flight *f)
{
    if (!f) return;
    pthread_mutex_lock(&f->mu);
    f->stop = 1;
    for (size_t g = 0; g < f->ngroups; g++)
        if (f->groups[g].started) pthread_cond_signal(&f->groups[g].work);
    pthread_mutex_unlock(&f->mu);
    for (size_t g = 0; g < f->ngroups; g++) {
        if (!f->groups[g].started) continue;
        pthread_join(f->groups[g].thread, NULL); /* it ends every queued call first */
        pthread_cond_destroy(&f->groups[g].work);
    }
    pthread_cond_destroy(&f->ended);
    pthread_mutex_destroy(&f->mu);
    free(f->req), free(f->next), free(f->done), free(f->rc), free(f->ended_flag);
    free(f->groups), free(f);
}
