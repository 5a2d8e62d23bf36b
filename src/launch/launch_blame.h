/* Which rank the others failed waiting for, from the ranks' own word: each
 * rank that fails writes whom its failure blamed (launcher.h's blame mark),
 * and a hung rank writes nothing. Follows every failed rank's chain (a blames
 * b, b blames c, ...) to its end and names the rank most chains end at. Pure:
 * the launcher hands it what it knows of each rank. */
#ifndef COLL_LAUNCH_BLAME_H
#define COLL_LAUNCH_BLAME_H

/* blames: a rank, -1 (no mark) or COLL_BLAMED_UNKNOWN (coll_tool.h: it timed
 * out waiting and cannot say for whom). */
typedef struct coll__launch_blame_rank {
    int failed;      /* ended non-zero, by a signal, or stopped by the launcher */
    int stopped;     /* the launcher had to stop it (it did not end on its own) */
    int blames;      /* whom its blame mark named */
    unsigned reaped; /* reap order, 1, 2, ...: the earlier of equal witnesses is named */
} coll__launch_blame_rank;

typedef struct coll__launch_blamed {
    int rank;   /* the rank the failed ranks waited for, or -1: no evidence */
    int direct; /* a failed rank that blamed it itself, or -1 (only "it alone
                   had to be stopped" speaks for it) */
    int votes;  /* how many failed ranks' chains end at it */
} coll__launch_blamed;

/* The end most chains reach, of equals one the launcher had to stop; a chain
 * that reaches a rank that waited for it cannot say whom continues to the one
 * rank the launcher had to stop, if only one. With no chain: that one stopped
 * rank, when every other failed rank ended on its own. */
coll__launch_blamed coll__launch_blame(const coll__launch_blame_rank *ranks, int n);

#endif
