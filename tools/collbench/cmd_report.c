/* collbench report FILE... -o DIR: result files in, a report directory out
 * (combined.csv, markdown tables, analysis.txt, PNG/SVG plots, index.html). */
#include "cli_common.h"
#include "coll.h"
#include "report/report.h"

#include <getopt.h>
#include <stdio.h>
#include <string.h>

static void usage(FILE *f)
{
    fprintf(f,
            "usage: collbench report FILE... -o DIR [--force]\n\n"
            "Reads collbench result files (CSV or JSON; communication and training results;\n"
            "e.g. one from a CPU machine and one from a GPU machine), merges them and writes\n"
            "into DIR:\n"
            "  combined.csv            every communication row, deduplicated and sorted\n"
            "  combined_training.csv   the same for training rows (when there are any)\n"
            "  full_results.md         markdown tables of every row\n"
            "  summary_by_config.md    one row per collective x machine x device x buffer kind\n"
            "                          x backend x process and node count; training per batch\n"
            "  analysis.txt            fastest backend per size (within one machine, device and\n"
            "                          buffer kind; 'within noise' where the p25-p75 spreads\n"
            "                          overlap), coll vs malloc buffers, machines side by side,\n"
            "                          saturation, crossover, scaling, anomalies\n"
            "  *.png, *.svg            time_vs_size, busbw_vs_size (with spread whiskers),\n"
            "                          backend_comparison_<size>, scaling_vs_procs,\n"
            "                          training_breakdown (needs PLplot)\n"
            "  index.html              one self-contained page with the plots and tables\n\n"
            "options:\n"
            "  -o, --output DIR  report directory (created; must not exist unless --force)\n"
            "  -f, --force       write into an existing DIR, replacing the report's files there\n"
            "  -h, --help        this text\n\n"
            "The report depends on the files only: the same files give the same bytes.\n"
            "exit codes: 0 ok; 1 an input file or row was rejected (the rest is still reported);\n"
            "2 bad usage or DIR exists; 3 an output could not be written.\n");
}

int cmd_report(int argc, char **argv)
{
    static const struct option opts[] = {
        {"output", required_argument, NULL, 'o'},
        {"force", no_argument, NULL, 'f'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    const char *outdir = NULL;
    int force = 0, c;
    optind = 0; /* GNU getopt: full re-initialisation */
    opterr = 0;
    while ((c = getopt_long(argc, argv, "o:fh", opts, NULL)) != -1) {
        switch (c) {
        case 'o': outdir = optarg; break;
        case 'f': force = 1; break;
        case 'h': usage(stdout); return 0;
        default:
            if (optopt == 'o') fprintf(stderr, "collbench report: -o/--output needs a directory\n");
            else fprintf(stderr, "collbench report: unknown option '%s'\n", argv[optind - 1]);
            usage(stderr);
            return EXIT_USAGE;
        }
    }
    if (!outdir || !*outdir) {
        fprintf(stderr, "collbench report: -o DIR is required (where to write the report)\n");
        return EXIT_USAGE;
    }
    if (optind >= argc) {
        fprintf(stderr, "collbench report: no result files given (FILE... : CSV or JSON from collbench)\n");
        return EXIT_USAGE;
    }
    int rc = report_run((const char *const *)argv + optind, (size_t)(argc - optind), outdir, force, stderr);
    if (rc == 0 || rc == REPORT_INPUT_REJECTED) return rc;
    return rc == COLL_EINVAL ? EXIT_USAGE : EXIT_RUNTIME;
}
