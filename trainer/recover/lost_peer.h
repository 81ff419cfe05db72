/* recover/lost_peer.h - the lost-peer protocol's one entry outside the
 * training loop (recover/lost_peer.c): a world of the ranks left that did
 * not form before its first step; inside the loop the protocol is
 * trainer_survive_lost_peer, which the loop calls as its train_config's
 * recovery (train/settings.h).
 * What this is not: the decision itself (recover/survivors.h).
 */
#ifndef HVD_TRAINER_RECOVER_LOST_PEER_H
#define HVD_TRAINER_RECOVER_LOST_PEER_H

#include "recover/survivors.h"

/* A world of the ranks left that did not form: rank `rank` of `size`,
 * going on from `before`, saw members never join (train/peer_lost.h,
 * peer_lost_at_start, of the runtime's error). The ranks that did make
 * one decision as after any loss, from the checkpoint OUT/last already
 * holds; its writer leaves only the summary (recover/lost_peer.c).
 * CHEXNET_EXIT_PEER_LOST (cmd/train.c goes on when the summary says so),
 * or 1 for any other failure. */
int survivors_after_failed_start(const char *out, int shrink, int rank, int size,
				 const struct survivors_saved *before);

struct trainer;
/* Training or validation broken by a lost peer: the exit status
 * (CHEXNET_EXIT_PEER_LOST, or 1 for any other failure). */
int trainer_survive_lost_peer(struct trainer *t);

#endif
