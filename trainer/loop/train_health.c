/* loop/train_health.c - text packing and the per-host shared-GPU count
 * (see loop/train_health.h). What it does not do: I/O.
 */
#include <string.h>

#include "loop/train_health.h"

void train_health_pack(const char *text, float *out, size_t n)
{
	size_t i = 0;

	for (; i + 1 < n && text[i]; i++)
		out[i] = (float)(unsigned char)text[i];
	for (; i < n; i++)
		out[i] = 0.0f;
}

void train_health_unpack(const float *in, size_t n, char *text)
{
	size_t i = 0;

	for (; i + 1 < n && in[i] >= 1.0f && in[i] <= 255.0f && in[i] == (float)(int)in[i]; i++)
		text[i] = (char)(unsigned char)(int)in[i];
	if (n)
		text[i] = '\0';
}

int train_health_shared(const char (*hosts)[TRAIN_HEALTH_HOST], const char (*bus_ids)[GPU_BUS_ID_LEN],
			int ranks, int self)
{
	char pair[2][GPU_BUS_ID_LEN];
	int shared = 0;

	if (self < 0 || self >= ranks || !bus_ids[self][0])
		return 0;
	memcpy(pair[0], bus_ids[self], GPU_BUS_ID_LEN);
	for (int r = 0; r < ranks; r++) {
		if (r == self || !bus_ids[r][0] || strcmp(hosts[r], hosts[self]) != 0)
			continue;
		memcpy(pair[1], bus_ids[r], GPU_BUS_ID_LEN);
		shared += gpu_health_sharing((const char (*)[GPU_BUS_ID_LEN])pair, 2, 0);
	}
	return shared;
}
