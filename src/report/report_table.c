/* Cells in, markdown or HTML out. */
#include "report/report_table.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void report_table_init(rtable *t, const char *title, const char *const *head, size_t ncols,
                       const char *align)
{
    memset(t, 0, sizeof *t);
    snprintf(t->title, sizeof t->title, "%s", title);
    t->head = head;
    t->ncols = ncols;
    t->align = align;
}

void report_table_row(rtable *t, const char *fmt, ...)
{
    if (t->oom) return;
    if (t->nrows == t->cap) {
        size_t cap = t->cap ? t->cap * 2 : 32;
        char **c = realloc(t->cells, cap * t->ncols * sizeof *c);
        if (!c) {
            t->oom = 1;
            return;
        }
        t->cells = c;
        t->cap = cap;
    }
    va_list ap;
    va_start(ap, fmt);
    char *line = NULL;
    int n = vasprintf(&line, fmt, ap);
    va_end(ap);
    if (n < 0) {
        t->oom = 1;
        return;
    }
    char **row = t->cells + t->nrows * t->ncols, *s = line;
    for (size_t c = 0; c < t->ncols; c++) {
        size_t k = s ? strcspn(s, "\t") : 0;
        row[c] = strndup(s ? s : "", k);
        if (!row[c]) t->oom = 1;
        s = s && s[k] == '\t' ? s + k + 1 : NULL;
    }
    free(line);
    t->nrows++;
}

void report_table_free(rtable *t)
{
    for (size_t i = 0; i < t->nrows * t->ncols; i++) free(t->cells[i]);
    free(t->cells);
    memset(t, 0, sizeof *t);
}

/* quote_start: > at a line's start after a backslash (a line of text, where
 * it would open a quote block; in a cell it cannot) */
static void md_escaped(sbuf *out, const char *s, int quote_start)
{
    for (const char *line = s; s && *s; s++) {
        int backslash = 0;
        switch (*s) {
        case '<': report_sb_puts(out, "&lt;"); continue;
        case '&': report_sb_puts(out, "&amp;"); continue;
        case '\n': line = s + 1; break;
        case '>': backslash = quote_start && s == line; break;
        case '\\':
        case '|':
        case '`':
        case '[':
        case ']': backslash = 1; break;
        default: break;
        }
        if (backslash) report_sb_put(out, "\\", 1);
        report_sb_put(out, s, 1);
    }
}

void report_sb_md_escaped(sbuf *out, const char *s) { md_escaped(out, s, 1); }

static void md_cell(sbuf *out, const char *s)
{
    report_sb_puts(out, " ");
    md_escaped(out, s, 0);
    report_sb_puts(out, " |");
}

void report_table_md(const rtable *t, sbuf *out)
{
    report_sb_puts(out, "## ");
    report_sb_md_escaped(out, t->title);
    report_sb_puts(out, "\n\n");
    if (t->nrows == 0) {
        report_sb_puts(out, "(no rows)\n\n");
        return;
    }
    report_sb_puts(out, "|");
    for (size_t c = 0; c < t->ncols; c++) md_cell(out, t->head[c]);
    report_sb_puts(out, "\n|");
    for (size_t c = 0; c < t->ncols; c++)
        report_sb_puts(out, t->align[c] == 'r' ? "---:|" : "---|");
    report_sb_puts(out, "\n");
    for (size_t r = 0; r < t->nrows; r++) {
        report_sb_puts(out, "|");
        for (size_t c = 0; c < t->ncols; c++) md_cell(out, t->cells[r * t->ncols + c]);
        report_sb_puts(out, "\n");
    }
    report_sb_puts(out, "\n");
}

void report_table_html(const rtable *t, sbuf *out)
{
    report_sb_puts(out, "<h3>");
    report_sb_html_escaped(out, t->title);
    report_sb_puts(out, "</h3>\n");
    report_table_html_table(t, out);
}

void report_table_html_table(const rtable *t, sbuf *out)
{
    if (t->nrows == 0) {
        report_sb_puts(out, "<p>(no rows)</p>\n");
        return;
    }
    report_sb_puts(out, "<div class=\"scroll\"><table>\n<thead><tr>");
    for (size_t c = 0; c < t->ncols; c++) {
        report_sb_puts(out, "<th>");
        report_sb_html_escaped(out, t->head[c]);
        report_sb_puts(out, "</th>");
    }
    report_sb_puts(out, "</tr></thead>\n<tbody>\n");
    for (size_t r = 0; r < t->nrows; r++) {
        report_sb_puts(out, "<tr>");
        for (size_t c = 0; c < t->ncols; c++) {
            report_sb_puts(out, t->align[c] == 'r' ? "<td class=\"n\">" : "<td>");
            report_sb_html_escaped(out, t->cells[r * t->ncols + c]);
            report_sb_puts(out, "</td>");
        }
        report_sb_puts(out, "</tr>\n");
    }
    report_sb_puts(out, "</tbody></table></div>\n");
}
