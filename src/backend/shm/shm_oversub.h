/* More ranks than cores: the plan's private windows open and a waiter's spin
 * yields the CPU at every miss (shm_knobs.c's OVERSUB rows, shm_wait.c). Each
 * rank can only count its own CPUs, and ranks given different CPU sets
 * (taskset, cpusets) count differently; ranks that plan the same call with
 * different windows take different engines and wait on each other until the
 * timeout. So each rank posts its own answer in its ctrl at set-up, and every
 * rank plans with the OR of all of them. */
#ifndef SHM_OVERSUB_H
#define SHM_OVERSUB_H

#include "backend/shm/shm_layout.h"

/* CPUs the job's ranks can share: this process's affinity, unless that is
 * the one CPU a launcher's --bind gave it, then the host's online CPUs (a
 * bound rank's affinity says nothing about how many cores the ranks have). */
int coll__shm_cpus(void);

/* This rank's own answer for n ranks: n > coll__shm_cpus(). */
int coll__shm_oversub_mine(int n);

/* The communicator's answer, the same on every rank: 1 when any of the n
 * ranks' ctrl says it has fewer cores than ranks (ctrl[r].oversub, posted
 * before the set-up barrier every rank passed). */
int coll__shm_oversub_agree(const shm_rank_ctrl *ctrl, int n);

#endif
