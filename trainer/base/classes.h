/* classes.h - the names of the 14 CheXNet classes, in the order of every
 * label vector, logit and AUROC table (base/batch.h: CHEXNET_CLASSES).
 * What this is not: parsing label fields (data/sets/labels.h).
 */
#ifndef HVD_TRAINER_CLASSES_H
#define HVD_TRAINER_CLASSES_H

#include "base/batch.h"

/* CheXNet order: Atelectasis, Cardiomegaly, ..., Hernia. */
extern const char *const data_class_names[CHEXNET_CLASSES];

#endif
