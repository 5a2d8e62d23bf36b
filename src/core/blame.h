/* Whom a failure blames, across the auto backend's groups. Backends and
 * transports name failed ranks in their own group's numbering, -1 for nobody.
 * A group whose peers failed because of a rank outside it (another host's rank
 * died) passes that rank on, in the world's numbering, as a value below -1:
 * code that only knows ">= 0: a member, else nobody" stays correct, and the
 * auto backend turns it back into the world rank for the message. */
#ifndef COLL_BLAME_H
#define COLL_BLAME_H

#define COLL_BLAME_OUTSIDE(world_rank) (-2 - (world_rank))
#define COLL_BLAME_IS_OUTSIDE(r) ((r) <= -2)
#define COLL_BLAME_WORLD(r) (-2 - (r))

#endif
