/* The machine's name in results (the CSV/JSON host column, the table header,
 * the report's machine): $COLLBENCH_HOST when set, else the kernel's
 * hostname. Two machines of one name (VMs both called "vm") stay apart in a
 * combined report only through it. */
#ifndef ENGINE_HOST_LABEL_H
#define ENGINE_HOST_LABEL_H

#include <stddef.h>

#define HOST_LABEL_ENV "COLLBENCH_HOST"

/* The name into buf (n >= 2; cut to n-1 bytes): 0, or -1 with why when
 * $COLLBENCH_HOST is set but not 1-63 of A-Z a-z 0-9 . _ - (it lands in CSV
 * fields and file names). */
int bench_host_label(char *buf, size_t n, char *why, size_t whylen);

#endif
