/* data/sets/split_key.h - a data set's key: 16 random bytes made once
 * (getrandom) and kept in the data folder as DATA_KEY_FILE, one line of
 * 32 lowercase hex digits. It keys DICOM Patient IDs' numbers, the
 * patient numbers of a generic layout without a patient column (its
 * image paths) and the validation split (data/sets/split.h), so a
 * patient's split depends on its id and this key only, never on the
 * other files, and a pack, a re-pack and direct mode over the folder
 * agree. `chexnet pack` records it in index.txt (`patient-key`).
 * Deleting the file gives the set a new key: a new split.
 * What this is not: the hashing itself (patient.c, split.c).
 */
#ifndef HVD_TRAINER_DATA_SPLIT_KEY_H
#define HVD_TRAINER_DATA_SPLIT_KEY_H

#include <stddef.h>
#include <stdint.h>

#define DATA_KEY_FILE "chexnet-key.txt"

/* dir's key into key: read from dir/DATA_KEY_FILE, or made and written
 * there atomically when absent (two makers at once agree: link() keeps
 * the first). 0, or -1 with a one-line message (an unwritable folder
 * without a key, a malformed key file) in err. */
int data_split_key(const char *dir, uint8_t key[16], char *err, size_t err_bytes);

/* key as 32 hex digits and back (-1: not 32 lowercase hex digits). */
void data_key_hex(const uint8_t key[16], char hex[33]);
int data_key_parse(const char *hex, uint8_t key[16]);

/* Writes dir/DATA_KEY_FILE with key, replacing none: `chexnet synth`'s
 * key, made from its seed so a generated set is the same every time. */
int data_split_key_write(const char *dir, const uint8_t key[16], char *err, size_t err_bytes);

#endif
