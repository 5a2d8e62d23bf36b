/* `collbench info`'s listen addresses (info_net.h). */
#include "info_net.h"

#include <stdio.h>
#include <stdlib.h>

#include "coll_tool.h"

void info_net_print_text(void)
{
    coll_listen_pick p;
    char err[400];
    if (coll_listen_addr_from_env(&p, err, sizeof err) == 0)
        printf("  %-22s %s on %s (%s)\n", "listen tcp, auto", p.addr,
               p.ifname[0] ? p.ifname : "no interface of this host", p.why);
    else printf("  %-22s none: %s\n", "listen tcp, auto", err);
    /* Under mpirun the store is rank 0's, found by the same rule; the MPI
     * library picks its own interfaces. */
    printf("  %-22s rendezvous as tcp; data over Open MPI's interfaces "
           "(OMPI_MCA_btl_tcp_if_include)\n",
           "listen mpi");
    const char *nccl = getenv("NCCL_SOCKET_IFNAME");
    printf("  %-22s %s%s\n", "listen nccl", nccl ? "NCCL_SOCKET_IFNAME=" : "NCCL's own choice",
           nccl ? nccl : " (NCCL_SOCKET_IFNAME unset)");
}

#ifdef COLL_HAVE_JANSSON
void info_net_add_json(json_t *root)
{
    coll_listen_pick p;
    char err[400];
    json_t *l = coll_listen_addr_from_env(&p, err, sizeof err) == 0
                    ? json_pack("{s:s, s:s, s:s}", "addr", p.addr, "ifname", p.ifname, "why", p.why)
                    : json_pack("{s:s}", "error", err);
    json_object_set_new(root, "listen", l);
}
#endif
