/* A table of text cells, rendered as markdown or HTML: the report's tables are
 * built once and written in both formats, so the .md files and index.html agree. */
#ifndef REPORT_TABLE_H
#define REPORT_TABLE_H

#include <stddef.h>

#include "report/report_data.h"
#include "report/report_text.h"
#include "report/report_view.h"

typedef struct rtable {
    char title[160];
    size_t ncols;
    const char *const *head;
    const char *align; /* 'l' or 'r' per column */
    char **cells;      /* nrows * ncols */
    size_t nrows, cap;
    int oom;
} rtable;

void report_table_init(rtable *t, const char *title, const char *const *head, size_t ncols,
                       const char *align);
/* Appends one row of ncols cells, each printf-formatted from fmt separated by '\t'. */
__attribute__((format(printf, 2, 3))) void report_table_row(rtable *t, const char *fmt, ...);
void report_table_free(rtable *t);
/* s for a Markdown table cell, heading or line: < & as HTML entities (no tag
 * or entity of the input's reaches a renderer), \\ | ` [ ] after a backslash
 * (no cell split, code span or link), and > too at a line's start (no quote
 * block); elsewhere > stays itself, so that the text reads as it says
 * ("35.1 -> 12.8", ">=16M") also where nothing renders it. Control bytes never
 * get here: the readers refuse them (report_check.h). */
void report_sb_md_escaped(sbuf *out, const char *s);
/* Markdown: titles and cells escaped by report_sb_md_escaped. */
void report_table_md(const rtable *t, sbuf *out);
void report_table_html(const rtable *t, sbuf *out);       /* <h3> title + table */
void report_table_html_table(const rtable *t, sbuf *out); /* the table alone */

/* The report's tables (report_tables.c). d sorted; v built from d. */
void report_table_comm(const report_data *d, rtable *t);         /* every row */
void report_table_train(const report_data *d, rtable *t);        /* every training row */
void report_table_mem(const report_data *d, rtable *t);          /* every memory row */
void report_table_comm_summary(const report_view *v, rtable *t); /* one row per config */
void report_table_train_summary(const report_data *d, rtable *t);

#endif
