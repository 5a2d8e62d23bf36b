/* Row storage and the dispatch from a file to its reader (CSV or JSON). */
#include "report/report.h"
#include "report/report_data.h"
#include "report/report_log.h"
#include "report/report_text.h"

#include "coll.h"

#include <stdlib.h>
#include <string.h>

static int grow(void **p, size_t *cap, size_t n, size_t size)
{
    if (n < *cap) return 0;
    size_t c = *cap ? *cap * 2 : 64;
    void *q = realloc(*p, c * size);
    if (!q) return COLL_ENOMEM;
    *p = q;
    *cap = c;
    return 0;
}

int report_add_comm(report_data *d, const bench_row *r)
{
    if (grow((void **)&d->comm, &d->comm_cap, d->ncomm, sizeof *r)) return COLL_ENOMEM;
    d->comm[d->ncomm++] = *r;
    return 0;
}

int report_add_train(report_data *d, const report_train_row *r)
{
    if (grow((void **)&d->train, &d->train_cap, d->ntrain, sizeof *r)) return COLL_ENOMEM;
    d->train[d->ntrain++] = *r;
    return 0;
}

int report_add_mem(report_data *d, const report_mem_row *r)
{
    if (grow((void **)&d->mem, &d->mem_cap, d->nmem, sizeof *r)) return COLL_ENOMEM;
    d->mem[d->nmem++] = *r;
    return 0;
}

void report_data_free(report_data *d)
{
    free(d->comm);
    free(d->train);
    free(d->mem);
    memset(d, 0, sizeof *d);
}

int report_read_text(report_data *d, const char *text, size_t len, report_log *log)
{
    /* A UTF-8 byte order mark (Excel, Notepad) is no part of the header. */
    if (len >= 3 && !memcmp(text, "\xef\xbb\xbf", 3)) text += 3, len -= 3;
    size_t i = 0;
    while (i < len && (text[i] == ' ' || text[i] == '\t' || text[i] == '\r' || text[i] == '\n'))
        i++;
    if (i == len) {
        rlog_problem(log, "%s:1: empty file (no header, no rows); file skipped", log->path);
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
    if (read_whole_file(path, REPORT_MAX_INPUT_BYTES, &text, &len, why, sizeof why) != 0) {
        rlog_problem(&l, "%s: %s; file skipped", path, why);
        rc = REPORT_INPUT_REJECTED;
    } else {
        rc = report_read_text(d, text, len, &l);
        free(text);
    }
    rlog_done(&l);
    return rc;
}
