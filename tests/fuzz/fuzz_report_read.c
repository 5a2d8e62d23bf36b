/* libFuzzer target: bytes as a result file given to collbench report, through
 * its readers (report_read_text): CSV header detection, line bounds, field
 * splitting and parsing, the JSON sections, the value checks and the bounded,
 * escaped messages; then the merge (sort, dedup) of what was read. Anything may
 * come in; nothing may crash, leak, read out of bounds or grow without bound.
 * The messages go to /dev/null. */
#include "report/report_data.h"
#include "report/report_log.h"

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static FILE *devnull;
    if (!devnull && !(devnull = fopen("/dev/null", "w"))) abort();
    /* The readers get what report_read_whole_file gives: the bytes, NUL-terminated. */
    char *text = malloc(size + 1);
    if (!text) return 0;
    if (size) memcpy(text, data, size);
    text[size] = '\0';
    report_data d;
    memset(&d, 0, sizeof d);
    report_log log = {devnull, "fuzz-input", 0};
    report_read_text(&d, text, size, &log);
    report_log_done(&log);
    report_sort_dedup(&d);
    report_data_free(&d);
    free(text);
    return 0;
}
