/* Taking back a directory a run made for its own files. */
#ifndef COLL_DIR_REMOVE_H
#define COLL_DIR_REMOVE_H

/* Removes the entries of dir (files; it holds no subdirectories) and then dir
 * itself. 0, or -1 with errno from the rmdir when dir could not be removed. */
int coll__remove_flat_dir(const char *dir);

#endif
