/* patient.h - patients of DICOM images: the DICOM Patient ID (0010,0020)
 * is personal data of up to 64 characters, the shards keep a 32-bit
 * patient number, so an ID becomes the low 32 bits of SipHash-2-4 keyed
 * by the data set's patient key (base/siphash.h). The ID itself is never
 * stored or printed; two IDs whose numbers collide count as one patient
 * (they stay on one side of the split).
 *
 * The key is the data set's random key (data/sets/split_key.h, made once
 * and kept in the folder), so a pack, a re-pack and direct mode over the
 * same folder number patients, and split them, alike; a pack records it
 * in index.txt (`patient-key`).
 * What this is not: the val split itself (split.h).
 */
#ifndef HVD_TRAINER_DATA_PATIENT_H
#define HVD_TRAINER_DATA_PATIENT_H

#include <stddef.h>
#include <stdint.h>

#include "data/sets/set.h"

uint32_t data_patient_number(const uint8_t key[16], const char *patient_id);

/* Reads every image of set's splits (a missing or unreadable one, or a
 * DICOM file that is no image, is left to the decoder); for each DICOM
 * image: with csv_has
 * patient (the labels CSV has a patient column) the CSV wins, and images
 * whose DICOM Patient IDs and CSV patients do not pair one to one are an
 * error; without it the entry's patient becomes the ID's number (an empty
 * ID is an error with a hint). Then a patient in both train (and val) and
 * test is an error. Each DICOM entry's view becomes its View Position's
 * code (data/sets/view.h); images of modalities other than CR, DX, DR are
 * marked (other_modality) for a note. Returns 0, or -1 with a one-line message (naming
 * images, never an ID) in err. set->dicom_images counts the DICOM files. */
int data_patient_from_dicom(struct data_set *set, int csv_has_patient, char *err,
			    size_t err_bytes);

#endif
