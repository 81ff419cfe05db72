/* vote/vote_shm.c - the coordination plane through memory the ranks
 * of one node share (vote.h). Rank 0 creates a POSIX shared-memory object
 * under a random name (O_EXCL, mode 0600), passes the name through the
 * bootstrap, and unlinks it once every rank has said it attached, so
 * /dev/shm lists nothing while the job runs. A rank attaches only to an
 * object its own user owns, that no one else may open, of the expected
 * size; if any rank cannot, every rank gives it up (the same answer from
 * one more bootstrap exchange).
 * Each rank owns a slot: a sequence number on its own cache line and two
 * halves of values, used in turn. Vote k writes half k % 2, then raises
 * the number to k (a release store); a rank reads every slot once every
 * number is at least k. A half is rewritten (vote k + 2) only after every
 * rank has read it: a rank writes vote k + 2 after it finished vote k + 1,
 * which every rank posted after it finished vote k.
 * What it does not do: wait (test only looks), or trust a peer's values
 * beyond taking their minimum.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "vote/vote.h"

struct shm_slot {
	_Alignas(64) uint64_t seq;
	_Alignas(64) int64_t vals[2][VOTE_MAX_VALUES];
};

struct shm_vote {
	struct shm_slot *slots;
	size_t bytes;
	int rank, size;
	uint64_t count;     /* votes started */
	int64_t *vals;      /* the vote in flight */
	int n;
};

/* What rank 0 passes through the bootstrap, and every rank's answers. */
struct shm_name {
	char name[64];
	int32_t attached;
};

static int shm_start(void *ctx, int64_t *vals, int n, const struct comm_wait *w)
{
	struct shm_vote *s = ctx;
	uint64_t k = ++s->count;
	struct shm_slot *mine = &s->slots[s->rank];
	memcpy(mine->vals[k % 2], vals, (size_t)n * sizeof(*vals));
	__atomic_store_n(&mine->seq, k, __ATOMIC_RELEASE);
	s->vals = vals;
	s->n = n;
	return 0;
}

static int shm_test(void *ctx, int *done, const struct comm_wait *w)
{
	struct shm_vote *s = ctx;
	uint64_t k = s->count;
	*done = 0;
	for (int r = 0; r < s->size; r++)
		if (__atomic_load_n(&s->slots[r].seq, __ATOMIC_ACQUIRE) < k)
			return 0;
	for (int r = 0; r < s->size; r++) {
		const int64_t *theirs = s->slots[r].vals[k % 2];
		for (int i = 0; i < s->n; i++)
			if (theirs[i] < s->vals[i])
				s->vals[i] = theirs[i];
	}
	*done = 1;
	return 0;
}

static void shm_close(void *ctx, int clean)
{
	struct shm_vote *s = ctx;
	munmap(s->slots, s->bytes);
	free(s);
}

static const struct vote_ops shm_ops = {
	.name = "shared memory", .start = shm_start, .test = shm_test, .close = shm_close,
};

/* Rank 0: a new object under a random name, sized and mapped. */
static void *create(const char *name, size_t bytes)
{
	int fd = shm_open(name, O_CREAT | O_EXCL | O_RDWR | O_CLOEXEC, 0600);
	if (fd < 0)
		return NULL;
	void *p = ftruncate(fd, (off_t)bytes) ? MAP_FAILED
		  : mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	if (p == MAP_FAILED)
		shm_unlink(name);
	return p == MAP_FAILED ? NULL : p;
}

/* The others: rank 0's object, if it is this user's, private and whole. */
static void *attach(const char *name, size_t bytes)
{
	struct stat st;
	int fd = shm_open(name, O_RDWR | O_CLOEXEC, 0);
	if (fd < 0)
		return NULL;
	void *p = MAP_FAILED;
	if (!fstat(fd, &st) && st.st_uid == geteuid() && !(st.st_mode & 077) &&
	    (size_t)st.st_size == bytes)
		p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	return p == MAP_FAILED ? NULL : p;
}

int vote_shm_open(struct vote_plane *v, struct bootstrap *b, char *err, size_t n)
{
	size_t bytes = (size_t)b->size * sizeof(struct shm_slot);
	struct shm_name mine = { "", 1 }, *all = calloc((size_t)b->size, sizeof(*all));
	struct shm_vote *s = calloc(1, sizeof(*s));
	void *map = NULL;
	int rc = all && s ? 0 : HVD_ERR_NOMEM;
	if (!rc && b->rank == 0) { /* a name no one can guess, this user's */
		uint64_t r = 0;
		if (auth_random(&r, sizeof(r)))
			r = (uint64_t)getpid() << 20 ^ (uint64_t)time(NULL);
		snprintf(mine.name, sizeof(mine.name), "/hvd-vote-%u-%016llx", (unsigned)geteuid(),
			 (unsigned long long)r);
		map = create(mine.name, bytes);
		mine.attached = map != NULL;
	}
	if (!rc)
		rc = bootstrap_allgather(b, "hvd.vote.name", &mine, sizeof(mine), all, err, n);
	if (!rc && b->rank != 0) {
		map = all[0].attached ? attach(all[0].name, bytes) : NULL;
		mine.attached = map != NULL;
	}
	if (!rc)
		rc = bootstrap_allgather(b, "hvd.vote.attached", &mine, sizeof(mine), all, err, n);
	int everyone = !rc;
	for (int r = 0; !rc && r < b->size; r++)
		everyone &= all[r].attached == 1;
	free(all);
	if (b->rank == 0 && map)
		shm_unlink(mine.name); /* attached or given up: no name is left */
	if (rc || !everyone) {
		if (map)
			munmap(map, bytes);
		free(s);
		return rc ? rc : 1;
	}
	*s = (struct shm_vote){ .slots = map, .bytes = bytes, .rank = b->rank, .size = b->size };
	v->ops = &shm_ops;
	v->ctx = s;
	return 0;
}
