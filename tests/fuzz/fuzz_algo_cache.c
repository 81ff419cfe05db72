/* fuzz_algo_cache.c - libFuzzer target for the reader of the gpu
 * backend's per-user cache of timed convolution algorithms
 * (trainer/backend/gpu/gpu_algo_file.c): the input is the file, read from
 * disk as a run reads it. The reader must accept it or refuse it with one
 * phrase (no newline); what it accepts must hold up: every choice within
 * its key's budget, and the table written back and read again is the
 * same table. Seeds: a file the writer wrote (two entries), and one of
 * the device line only.
 * What it does not do: choose algorithms (that needs cuDNN).
 */
#include <stdlib.h>
#include <string.h>

#include "backend/gpu/gpu_algo_file.h"
#include "fuzz_files.h"

#define DEVICE "NVIDIA H200|sm 90|driver 13000|cuDNN 91900|CUDA runtime 13000"

static struct gpu_algo_cache got, again;

static void holds_up(void)
{
	char why[256];
	char *text = gpu_algo_file_format(&got, DEVICE);

	for (int s = 0; s < GPU_ALGO_CACHE_SLOTS; s++)
		if (got.slot[s].used &&
		    got.slot[s].choice.workspace_bytes > (size_t)got.slot[s].key.budget)
			abort();
	if (!text || gpu_algo_file_parse(text, strlen(text), DEVICE, &again, why, sizeof(why)) ||
	    again.count != got.count)
		abort();
	for (int s = 0; s < GPU_ALGO_CACHE_SLOTS; s++) {
		const struct gpu_algo_choice *c;
		if (got.slot[s].used && (!(c = gpu_algo_cache_find(&again, &got.slot[s].key)) ||
					 c->algo != got.slot[s].choice.algo ||
					 c->workspace_bytes != got.slot[s].choice.workspace_bytes))
			abort();
	}
	free(text);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char why[256] = "";
	const char *path = fuzz_write("conv-algorithms.txt", data, size);
	int rc = gpu_algo_file_read(path, DEVICE, &got, why, sizeof(why));

	if (rc < 0 && (!why[0] || strchr(why, '\n')))
		abort();
	if (rc == 0)
		holds_up();
	return 0;
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	const char *dir = fuzz_empty_corpus(*argc, *argv);
	struct gpu_conv_key k = { .dir = 0, .n = 16, .c = 64, .h = 56, .w = 56, .k = 32, .r = 3,
				  .stride = 1, .pad = 1, .x_image_stride = 200704,
				  .y_image_stride = 802816, .budget = 1 << 30 };
	struct gpu_algo_choice c = { 2, 0, 4096 };

	if (!dir)
		return 0;
	gpu_algo_cache_init(&got);
	gpu_algo_cache_put(&got, &k, &c);
	k.dir = 2, k.any = 1, c.algo = 3;
	gpu_algo_cache_put(&got, &k, &c);
	char *text = gpu_algo_file_format(&got, DEVICE);
	if (text)
		fuzz_seed(dir, "seed-two", text, strlen(text));
	free(text);
	const char *head = "chexnet-conv-algorithms 1\ndevice " DEVICE "\n";
	fuzz_seed(dir, "seed-empty", head, strlen(head));
	return 0;
}
