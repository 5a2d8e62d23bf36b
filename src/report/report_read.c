/* The dispatch from a file to its reader (CSV or JSON); the readers store rows
 * through report_data.c. */
#include "report/report.h"
#include "report/report_data.h"
#include "report/report_log.h"
#include "report/report_text.h"

#include "coll.h"

#include <stdlib.h>
#include <string.h>

int report_read_text(report_data *d, const char *text, size_t len, report_log *log)
{
    /* A UTF-8 byte order mark (Excel, Notepad) is no part of the header. */
    if (len >= 3 && !memcmp(text, "\xef\xbb\xbf", 3)) text += 3, len -= 3;
    size_t i = 0;
    while (i < len && (text[i] == ' ' || text[i] == '\t' || text[i] == '\r' || text[i] == '\n'))
        i++;
    if (i == len) {
        report_log_problem(log, "%s:1: empty file (no header, no rows); file skipped", log->path);
        return REPORT_INPUT_REJECTED;
    }
    if (text[i] == '{') return report_read_json(d, text, len, log);
    return report_read_csv(d, text, len, log);
}

int report_read_file(report_data *d, const char *path, FILE *log)
{
    char *text, why[256];
    size_t len;
    report_log l = {log, path, 0};
    int rc;
    if (report_read_whole_file(path, REPORT_MAX_INPUT_BYTES, &text, &len, why, sizeof why) != 0) {
        report_log_problem(&l, "%s: %s; file skipped", path, why);
        rc = REPORT_INPUT_REJECTED;
    } else {
        rc = report_read_text(d, text, len, &l);
        free(text);
    }
    report_log_done(&l);
    return rc;
}
