/* base/fence_writes.h - the step a claimant takes before it links its
 * claim (base/fence.h, "Writes"); used by fence.c alone.
 * What it is not: a claim.
 */
#ifndef HVD_TRAINER_BASE_FENCE_WRITES_H
#define HVD_TRAINER_BASE_FENCE_WRITES_H

/* OUT/.generations/G.writes made; every older generation's writes folder
 * removed, a checkpoint folder that an unfinished replacement had moved
 * aside into one put back first where its name in OUT is missing; each
 * appended file copied afresh. 0, or -1 (errno). */
int fence_prepare(const char *out, long g);

#endif
