/* patient.c - DICOM Patient IDs to patient numbers, the CSV/DICOM
 * agreement and the train/test patient check (patient.h).
 * What it does not do: decode pixels (dicom_pixels.c reads the IDs).
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/siphash.h"
#include "data/dicom/dicom_pixels.h"
#include "data/sets/patient.h"
#include "data/sets/view.h"

struct pairing {
	uint64_t id_hash;       /* SipHash of the ID under the set's key */
	uint32_t csv;           /* the CSV's patient */
	const char *name;
};

uint32_t data_patient_number(const uint8_t key[16], const char *patient_id)
{
	return (uint32_t)siphash24(key, patient_id, strlen(patient_id));
}

static int by_id(const void *a, const void *b)
{
	const struct pairing *x = a, *y = b;
	return (x->id_hash > y->id_hash) - (x->id_hash < y->id_hash);
}

static int by_csv(const void *a, const void *b)
{
	const struct pairing *x = a, *y = b;
	return (x->csv > y->csv) - (x->csv < y->csv);
}

/* One ID per CSV patient and one CSV patient per ID. */
static int check_pairing(struct pairing *p, size_t n, const char *dir, char *err, size_t err_bytes)
{
	qsort(p, n, sizeof(*p), by_id);
	for (size_t i = 1; i < n; i++)
		if (p[i].id_hash == p[i - 1].id_hash && p[i].csv != p[i - 1].csv)
			return snprintf(err, err_bytes, "chexnet: data dir '%s': images '%s' and '%s': one DICOM "
					"Patient ID but patients %u and %u in the labels CSV", dir, p[i - 1].name,
					p[i].name, p[i - 1].csv, p[i].csv), -1;
	qsort(p, n, sizeof(*p), by_csv);
	for (size_t i = 1; i < n; i++)
		if (p[i].csv == p[i - 1].csv && p[i].id_hash != p[i - 1].id_hash)
			return snprintf(err, err_bytes, "chexnet: data dir '%s': images '%s' and '%s': patient %u "
					"in the labels CSV but two DICOM Patient IDs", dir, p[i - 1].name,
					p[i].name, p[i].csv), -1;
	return 0;
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	return (x > y) - (x < y);
}

/* No patient of test is in train or val. */
static int check_train_test(const struct data_set *set, char *err, size_t err_bytes)
{
	size_t n = set->split[0].count + set->split[1].count;
	uint32_t *seen = malloc((n + 1) * sizeof(*seen));
	if (!seen)
		return snprintf(err, err_bytes, "chexnet: data dir '%s': out of memory", set->root), -1;
	for (size_t i = 0, k = 0; i < 2; i++)
		for (size_t j = 0; j < set->split[i].count; j++)
			seen[k++] = set->split[i].items[j].patient;
	qsort(seen, n, sizeof(*seen), cmp_u32);
	int rc = 0;
	for (size_t j = 0; j < set->split[2].count && rc == 0; j++) {
		const struct data_entry *e = &set->split[2].items[j];
		if (bsearch(&e->patient, seen, n, sizeof(*seen), cmp_u32)) {
			snprintf(err, err_bytes, "chexnet: data dir '%s': test image '%s': its patient (%u) "
				 "also has train images", set->root, e->name, e->patient);
			rc = -1;
		}
	}
	free(seen);
	return rc;
}

int data_patient_from_dicom(struct data_set *set, int csv_has_patient, char *err,
			    size_t err_bytes)
{
	size_t total = set->split[0].count + set->split[1].count + set->split[2].count, n = 0;
	struct pairing *pairs = calloc(total + 1, sizeof(*pairs));
	char path[4400];
	int rc = -1;
	if (!pairs)
		return snprintf(err, err_bytes, "chexnet: data dir '%s': out of memory", set->root), -1;
	set->dicom_images = 0;
	for (int s = 0; s < 3; s++)
		for (size_t i = 0; i < set->split[s].count; i++) {
			struct data_entry *e = &set->split[s].items[i];
			struct dicom_info info;
			int is_dicom;
			/* a missing, unreadable or non-image file is refused where
			 * it is decoded (or skipped there: pack --skip-unreadable) */
			if (data_set_image_path(set, e, path, sizeof(path), err, err_bytes) != 0 ||
			    dicom_info_file(path, &is_dicom, &info, err, err_bytes) != 0 ||
			    !is_dicom || !info.image)
				continue;
			set->dicom_images++;
			e->view = data_view_code(info.view);
			if (strcmp(info.modality, "CR") && strcmp(info.modality, "DX") && strcmp(info.modality, "DR")) {
				e->other_modality = 1;
				snprintf(set->dicom_other_example, sizeof(set->dicom_other_example), "%.*s",
					 (int)strcspn(info.modality, "\n\r\t"), info.modality);
			}
			if (!info.patient_id[0] && !csv_has_patient) {
				snprintf(err, err_bytes, "chexnet: image '%s': DICOM Patient ID (0010,0020) empty: "
					 "hint: add a patient column to the labels CSV", path);
				goto out;
			}
			uint64_t h = siphash24(set->patient_key, info.patient_id, strlen(info.patient_id));
			if (info.patient_id[0])
				pairs[n++] = (struct pairing){ h, e->patient, e->name };
			if (!csv_has_patient)
				e->patient = (uint32_t)h;
		}
	if (csv_has_patient && check_pairing(pairs, n, set->root, err, err_bytes) != 0)
		goto out;
	rc = set->dicom_images ? check_train_test(set, err, err_bytes) : 0;
out:
	free(pairs);
	return rc;
}
