/* A machine's name for tuning: see machine_id.h. */
#include "core/machine_id.h"

#include <stdio.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

/* Flags that change which copy or reduce loop runs, or how fast. */
static const char *const wanted[] = {"sse4_2", "avx",  "avx2",  "avx512f", "avx512bw",
                                     "erms",   "fsrm", "asimd", "sve"};

static void trim(char *s)
{
    size_t n = strlen(s);
    while (n && (s[n - 1] == '\n' || s[n - 1] == ' ' || s[n - 1] == '\t')) s[--n] = 0;
}

static int has_word(const char *list, const char *w)
{
    size_t n = strlen(w);
    for (const char *p = list; (p = strstr(p, w)) != NULL; p += n)
        if ((p == list || p[-1] == ' ' || p[-1] == '\t') &&
            (p[n] == 0 || p[n] == ' ' || p[n] == '\n'))
            return 1;
    return 0;
}

static void from_cpuinfo(coll__machine_id *m)
{
    FILE *f = fopen("/proc/cpuinfo", "r");
    char line[8192];
    int got_flags = 0;
    while (f && fgets(line, sizeof line, f)) {
        char *colon = strchr(line, ':');
        if (!colon) continue;
        const char *v = colon + 1 + (colon[1] == ' ');
        if (strcmp(m->cpu, "unknown") == 0 &&
            (strncmp(line, "model name", 10) == 0 || strncmp(line, "Model", 5) == 0)) {
            snprintf(m->cpu, sizeof m->cpu, "%s", v);
            trim(m->cpu);
        } else if (!got_flags &&
                   (strncmp(line, "flags", 5) == 0 || strncmp(line, "Features", 8) == 0)) {
            got_flags = 1;
            size_t used = 0;
            for (size_t i = 0; i < sizeof wanted / sizeof wanted[0]; i++)
                if (has_word(v, wanted[i]) && used < sizeof m->flags) {
                    int w = snprintf(m->flags + used, sizeof m->flags - used, "%s%s",
                                     used ? " " : "", wanted[i]);
                    if (w > 0) used += (size_t)w;
                }
        }
    }
    if (f) fclose(f);
    if (!m->flags[0]) snprintf(m->flags, sizeof m->flags, "none");
}

void coll__machine_id_here(coll__machine_id *m)
{
    memset(m, 0, sizeof *m);
    snprintf(m->cpu, sizeof m->cpu, "unknown");
    from_cpuinfo(m);
    struct utsname u;
    snprintf(m->kernel, sizeof m->kernel, "%s", uname(&u) == 0 ? u.release : "unknown");
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    m->cores = n > 0 ? (int)n : 0;
}

int coll__machine_id_differs(const coll__machine_id *here, const coll__machine_id *file, char *why,
                             size_t whylen)
{
    const char *what = NULL, *a = NULL, *b = NULL;
    if (strcmp(here->cpu, file->cpu) != 0) what = "CPU model", a = here->cpu, b = file->cpu;
    else if (strcmp(here->kernel, file->kernel) != 0)
        what = "kernel", a = here->kernel, b = file->kernel;
    else if (strcmp(here->flags, file->flags) != 0)
        what = "CPU flags", a = here->flags, b = file->flags;
    if (!what) return 0;
    if (why && whylen) snprintf(why, whylen, "%s '%s' here, '%s' in the file", what, a, b);
    return 1;
}
