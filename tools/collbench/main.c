/* collbench: the command table (git style). Each command is a function that gets
 * argv starting at the command's own name and returns the process exit code. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exit_codes.h"
#include "launch/launcher.h"

/* COLLBENCH_VERSION comes from CMake's project(VERSION): one place. */

/* cmd_collective.c: every collective benchmark; argv[0] names the collective. */
int cmd_collective(int argc, char **argv);
int cmd_straggler(int argc, char **argv); /* cmd_straggler.c */
int cmd_check(int argc, char **argv);     /* cmd_check.c */
int cmd_info(int argc, char **argv);      /* cmd_info.c */
/* cmd_init.c: communicator set-up cost. */
int cmd_init(int argc, char **argv);
int cmd_suite(int argc, char **argv);  /* cmd_suite.c */
int cmd_train(int argc, char **argv);  /* cmd_train.c */
int cmd_report(int argc, char **argv); /* cmd_report.c */
int cmd_model(int argc, char **argv);  /* cmd_model.c */
int cmd_replay(int argc, char **argv); /* cmd_replay.c */
int cmd_trace(int argc, char **argv);  /* cmd_trace.c */
int cmd_tune(int argc, char **argv);   /* cmd_tune.c */

typedef struct command {
    const char *name;
    int (*fn)(int argc, char **argv);
    const char *help;
} command;

static int cmd_help(int argc, char **argv);

static const command commands[] = {
    {"suite", cmd_suite, "the main job: sweep every backend -> results dir -> report"},
    {"allreduce", cmd_collective, "every rank gets the reduction of all ranks' buffers"},
    {"allgather", cmd_collective, "every rank gets every rank's block"},
    {"reducescatter", cmd_collective, "rank r gets block r of the reduction"},
    {"broadcast", cmd_collective, "the root's buffer goes to every rank"},
    {"reduce", cmd_collective, "the root gets the reduction of all ranks' buffers"},
    {"alltoall", cmd_collective, "block j of rank i goes to block i of rank j"},
    {"sendrecv", cmd_collective, "each rank sends to the next, receives from the previous"},
    {"barrier", cmd_collective, "every rank waits for all others"},
    {"train", cmd_train, "data-parallel training step: compute vs communication, overlap, buckets"},
    {"report", cmd_report, "result files -> plots, markdown tables, analysis, index.html"},
    {"model", cmd_model, "cost model fitted to result files; predictions for other clusters"},
    {"replay", cmd_replay, "a program's recorded communication replayed on every backend"},
    {"trace", cmd_trace, "torch profiler traces imported as replay traces; what a trace holds"},
    {"tune", cmd_tune, "measure this machine's crossovers into the tuning file libcoll reads"},
    {"init", cmd_init, "cost of creating a communicator, re-created every step vs reused"},
    {"check", cmd_check, "is this setup usable: PASS/FAIL per backend and step"},
    {"info", cmd_info, "this machine and build: CPU, memory, network, CUDA/NCCL, backends"},
    {"straggler", cmd_straggler, "which rank is late to the collective; monitored barrier"},
    {"help", cmd_help, "this list, or `collbench help COMMAND` for a command's options"},
};
#define N_COMMANDS (sizeof commands / sizeof commands[0])

static const command *find_command(const char *name)
{
    for (size_t i = 0; i < N_COMMANDS; i++)
        if (strcmp(commands[i].name, name) == 0) return &commands[i];
    return NULL;
}

static void print_commands(FILE *f)
{
    fprintf(f, "usage: collbench COMMAND [options]\n\n"
               "Benchmarks of collective communication (nccl-tests style) on every backend.\n\n"
               "commands:\n");
    for (size_t i = 0; i < N_COMMANDS; i++)
        fprintf(f, "  %-15s %s\n", commands[i].name, commands[i].help);
    fprintf(f, "\n`collbench COMMAND --help` shows a command's options.\n");
}

/* arg as an error message may echo it: control bytes (an ESC would reach the
 * terminal) as \xNN, and a long one cut in the middle, so the line stays a line. */
static const char *shown(const char *arg, char *buf, size_t len)
{
    enum { HEAD = 40, TAIL = 20 };
    size_t n = strlen(arg), k = 0;
    for (size_t i = 0; i < n && k + 8 < len; i++) {
        if (n > HEAD + TAIL + 3 && i == HEAD) {
            k += (size_t)snprintf(buf + k, len - k, "...");
            i = n - TAIL - 1;
            continue;
        }
        unsigned char c = (unsigned char)arg[i];
        if (c < 0x20 || c == 0x7f) k += (size_t)snprintf(buf + k, len - k, "\\x%02x", c);
        else buf[k++] = (char)c;
    }
    buf[k] = '\0';
    return buf;
}

/* `collbench help COMMAND` is `collbench COMMAND --help`. */
static int cmd_help(int argc, char **argv)
{
    if (argc < 2) {
        print_commands(stdout);
        return 0;
    }
    const command *c = find_command(argv[1]);
    if (!c || c->fn == cmd_help) {
        char b[256];
        fprintf(stderr, "collbench: help: unknown command '%s'\n", shown(argv[1], b, sizeof b));
        return EXIT_USAGE;
    }
    char *help_argv[] = {argv[1], "--help", NULL};
    return c->fn(2, help_argv);
}

int main(int argc, char **argv)
{
    if (argc < 2 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
        print_commands(stdout);
        return 0;
    }
    if (strcmp(argv[1], "--version") == 0) {
        printf("collbench %s\n", COLLBENCH_VERSION);
        return 0;
    }
    /* A rank our launcher started says it ended normally (exit or a return
     * from main; not _exit or a crash): one that exits 0 without saying so
     * left the others early (launcher.h, done_marks). */
    coll__launch_mark_done_at_exit();
    const command *c = find_command(argv[1]);
    if (!c) {
        char b[256];
        fprintf(stderr, "collbench: unknown command '%s' (see collbench help)\n",
                shown(argv[1], b, sizeof b));
        return EXIT_USAGE;
    }
    return c->fn(argc - 1, argv + 1);
}
