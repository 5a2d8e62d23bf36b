/* See dir_remove.h. */
#include "core/dir_remove.h"

#include <dirent.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int coll__remove_flat_dir(const char *dir)
{
    DIR *d = opendir(dir);
    if (d) {
        char path[4200];
        for (const struct dirent *e; (e = readdir(d));) {
            if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
            snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
            unlink(path);
        }
        closedir(d);
    }
    return rmdir(dir);
}
