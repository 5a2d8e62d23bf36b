/* Slurm's environment for the rendezvous: see slurm_env.h. */
#include "bootstrap/slurm_env.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* An unsigned decimal variable (Slurm's ids are 32-bit unsigned); 0 when unset or not one. */
static int read_id(const char *name, unsigned long long *out)
{
    const char *v = getenv(name);
    if (!v || !isdigit((unsigned char)v[0])) return 0;
    char *end;
    unsigned long long x = strtoull(v, &end, 10);
    if (*end || x > 0xffffffffull) return 0;
    *out = x;
    return 1;
}

int coll__slurm_store_port(void)
{
    unsigned long long job, step = 0;
    if (!read_id("SLURM_JOB_ID", &job)) return -1;
    read_id("SLURM_STEP_ID", &step);
    return COLL_SLURM_PORT_BASE + (int)((job * 97 + step) % COLL_SLURM_PORT_SPAN);
}

int coll__slurm_first_host(const char *list, char *buf, size_t n)
{
    size_t out = 0;
    const char *p = list ? list : "";
    while (*p && *p != ',') {
        if (*p == '[') { /* the range's first number, zero padding kept */
            p++;
            if (!isdigit((unsigned char)*p)) return -1;
            while (isdigit((unsigned char)*p)) {
                if (out + 1 >= n) return -1;
                buf[out++] = *p++;
            }
            p = strchr(p, ']');
            if (!p) return -1;
            p++;
            continue;
        }
        if (*p == ']' || isspace((unsigned char)*p) || out + 1 >= n) return -1;
        buf[out++] = *p++;
    }
    if (out == 0) return -1;
    buf[out] = '\0';
    return 0;
}

const char *coll__slurm_first_node(void)
{
    static _Thread_local char node[256];
    const char *names[] = {"SLURM_STEP_NODELIST", "SLURM_JOB_NODELIST"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (coll__slurm_first_host(getenv(names[i]), node, sizeof node) == 0) return node;
    return NULL;
}
