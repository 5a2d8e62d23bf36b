/* Cells in, markdown or HTML out. */
#include "report/report_table.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void rtable_init(rtable *t, const char *title, const char *const *head, size_t ncols,
                 const char *align)
{
    memset(t, 0, sizeof *t);
    snprintf(t->title, sizeof t->title, "%s", title);
    t->head = head;
    t->ncols = ncols;
    t->align = align;
}

void rtable_row(rtable *t, const char *fmt, ...)
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

void rtable_free(rtable *t)
{
    for (size_t i = 0; i < t->nrows * t->ncols; i++) free(t->cells[i]);
    free(t->cells);
    memset(t, 0, sizeof *t);
}

void sb_md_escaped(sbuf *out, const char *s)
{
    for (; s && *s; s++) {
        switch (*s) {
        case '<': sb_puts(out, "&lt;"); break;
        case '>': sb_puts(out, "&gt;"); break;
        case '&': sb_puts(out, "&amp;"); break;
        case '\\':
        case '|':
        case '`':
        case '[':
        case ']':
            sb_put(out, "\\", 1);
            sb_put(out, s, 1);
            break;
        default: sb_put(out, s, 1);
        }
    }
}

static void md_cell(sbuf *out, const char *s)
{
    sb_puts(out, " ");
    sb_md_escaped(out, s);
    sb_puts(out, " |");
}

void rtable_md(const rtable *t, sbuf *out)
{
    sb_puts(out, "## ");
    sb_md_escaped(out, t->title);
    sb_puts(out, "\n\n");
    if (t->nrows == 0) {
        sb_puts(out, "(no rows)\n\n");
        return;
    }
    sb_puts(out, "|");
    for (size_t c = 0; c < t->ncols; c++) md_cell(out, t->head[c]);
    sb_puts(out, "\n|");
    for (size_t c = 0; c < t->ncols; c++) sb_puts(out, t->align[c] == 'r' ? "---:|" : "---|");
    sb_puts(out, "\n");
    for (size_t r = 0; r < t->nrows; r++) {
        sb_puts(out, "|");
        for (size_t c = 0; c < t->ncols; c++) md_cell(out, t->cells[r * t->ncols + c]);
        sb_puts(out, "\n");
    }
    sb_puts(out, "\n");
}

void rtable_html(const rtable *t, sbuf *out)
{
    sb_puts(out, "<h3>");
    sb_html_escaped(out, t->title);
    sb_puts(out, "</h3>\n");
    rtable_html_table(t, out);
}

void rtable_html_table(const rtable *t, sbuf *out)
{
    if (t->nrows == 0) {
        sb_puts(out, "<p>(no rows)</p>\n");
        return;
    }
    sb_puts(out, "<div class=\"scroll\"><table>\n<thead><tr>");
    for (size_t c = 0; c < t->ncols; c++) {
        sb_puts(out, "<th>");
        sb_html_escaped(out, t->head[c]);
        sb_puts(out, "</th>");
    }
    sb_puts(out, "</tr></thead>\n<tbody>\n");
    for (size_t r = 0; r < t->nrows; r++) {
        sb_puts(out, "<tr>");
        for (size_t c = 0; c < t->ncols; c++) {
            sb_puts(out, t->align[c] == 'r' ? "<td class=\"n\">" : "<td>");
            sb_html_escaped(out, t->cells[r * t->ncols + c]);
            sb_puts(out, "</td>");
        }
        sb_puts(out, "</tr>\n");
    }
    sb_puts(out, "</tbody></table></div>\n");
}
