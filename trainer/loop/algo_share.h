/* loop/algo_share.h - what the gpu backend needs from the trainer to
 * choose its convolution algorithms by timing (backend.h's
 * backend_share, --conv-algorithms): the folder its choices are cached
 * in, and the broadcast through which rank 0's choices reach every rank.
 * What this is not: the choosing, or the cache file (backend/gpu).
 */
#ifndef HVD_TRAINER_LOOP_ALGO_SHARE_H
#define HVD_TRAINER_LOOP_ALGO_SHARE_H

#include <stddef.h>

#include "backend/backend.h"

/* $XDG_CACHE_HOME/chexnet, else $HOME/.cache/chexnet (an absolute
 * XDG_CACHE_HOME only, as the XDG rule says); NULL when neither is set
 * (nothing is cached then). A static buffer. */
const char *algo_cache_dir(void);

/* This process's rank and, with several ranks, the broadcast through the
 * runtime (dist.h; on the NCCL runtime through the backend's stream). */
struct backend_share algo_share(void);

#endif
