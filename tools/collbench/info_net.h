/* The network part of `collbench info`: which interface and address the tcp
 * and auto backends would listen on in this environment, and why (the rule of
 * bootstrap/listen_addr.h, with the launcher's variables as they are now). */
#ifndef COLLBENCH_INFO_NET_H
#define COLLBENCH_INFO_NET_H

/* "listen tcp, auto" plus the mpi and nccl lines, in print_text's format. */
void info_net_print_text(void);

#ifdef COLL_HAVE_JANSSON
#include <jansson.h>
/* "listen" key into info's JSON object: {addr, ifname, why} or {error}. */
void info_net_add_json(json_t *root);
#endif

#endif
