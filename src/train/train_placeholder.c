/* Placeholder so the library has a source until src/train lands. */
int coll_train_placeholder(void);
int coll_train_placeholder(void) { return 0; }
