/* Placeholder so the library has a source until src/report lands. */
int coll_report_placeholder(void);
int coll_report_placeholder(void) { return 0; }
