/* The point-to-point engine (shm_p2p.c): send, recv and sendrecv through the
 * per-pair mailboxes, and the state it keeps between calls. */
#ifndef COLL_SHM_P2P_H
#define COLL_SHM_P2P_H

struct shm_op;

typedef struct shm_p2p_state {
    unsigned char *watch; /* [n] peers whose death fails a p2p wait */
    int any_last;         /* the peer recv_any took last: looked at last next time */
} shm_p2p_state;

int coll__shm_p2p_run(struct shm_op *o);

#endif
