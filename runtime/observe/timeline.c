/* timeline.c - see timeline.h. The file is "[\n" events "\n]"; each new
 * event overwrites the closing bracket and writes it again, so a reader
 * always sees a complete JSON array. Lanes map to pids through a small
 * open-addressing hash table. */
#include "observe/timeline.h"

#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>

#include "core/clock.h"

struct lane {
	char *name;              /* NULL: a free slot */
	int pid;
};

struct timeline {
	pthread_mutex_t lock;
	FILE *f;
	long end_pos;            /* offset of the closing ']' */
	int events;
	double start;            /* runtime_now() at open */
	struct lane *lanes;      /* hash slots, at most half in use (next_pid - 1) */
	size_t slots;
	int next_pid;
};

static void json_escape(const char *s, char *out, size_t len)
{
	size_t o = 0;
	for (; *s && o + 7 < len; s++) {
		unsigned char ch = (unsigned char)*s;
		if (ch == '"' || ch == '\\')
			out[o++] = '\\'; /* then the character itself */
		if (ch < 0x20)
			o += (size_t)snprintf(out + o, len - o, "\\u%04x", ch);
		else
			out[o++] = (char)ch;
	}
	out[o] = '\0';
}

/* Appends one event (a JSON object without braces' neighbours). */
static void emit(struct timeline *t, const char *event)
{
	if (fseek(t->f, t->end_pos, SEEK_SET))
		return;
	const char *sep = t->events ? ",\n" : "";
	int w = fprintf(t->f, "%s%s\n]", sep, event);
	if (w <= 0)
		return;
	t->end_pos += w - 1;
	t->events++;
	fflush(t->f);
}

int timeline_open(struct timeline **out, const char *path, char *err, size_t errlen)
{
	*out = NULL;
	struct timeline *t = calloc(1, sizeof(*t));
	if (!t || !(t->f = fopen(path, "w+"))) {
		snprintf(err, errlen, "hvd: HVD_TIMELINE: '%s': %s", path,
			 t ? strerror(errno) : "out of memory");
		free(t);
		return -1;
	}
	pthread_mutex_init(&t->lock, NULL);
	t->start = runtime_now();
	struct timeval wall;
	gettimeofday(&wall, NULL);
	fputs("[\n]", t->f);
	t->end_pos = 2;
	t->next_pid = 1;
	char ev[256];
	snprintf(ev, sizeof(ev), "{\"name\": \"process_name\", \"ph\": \"M\", \"pid\": 0, "
		 "\"args\": {\"start_time_since_epoch_in_micros\": %lld}}",
		 (long long)wall.tv_sec * 1000000 + wall.tv_usec);
	emit(t, ev);
	*out = t;
	return 0;
}

static uint64_t hash_name(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ull;
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 0x100000001b3ull;
	return h;
}

/* The slot of name among `slots` lanes: the one holding it, or the free
 * one where it goes. */
static size_t slot_of(const struct lane *lanes, size_t slots, const char *name)
{
	size_t j = hash_name(name) & (slots - 1);
	while (lanes[j].name && strcmp(lanes[j].name, name))
		j = (j + 1) & (slots - 1);
	return j;
}

static int grow_lanes(struct timeline *t)
{
	size_t slots = t->slots ? t->slots * 2 : 1024;
	struct lane *lanes = calloc(slots, sizeof(*lanes));
	if (!lanes)
		return -1;
	for (size_t i = 0; i < t->slots; i++)
		if (t->lanes[i].name)
			lanes[slot_of(lanes, slots, t->lanes[i].name)] = t->lanes[i];
	free(t->lanes);
	t->lanes = lanes;
	t->slots = slots;
	return 0;
}

/* The lane's pid; a new lane gets its metadata events first. -1: no memory. */
static int lane_pid(struct timeline *t, const char *lane)
{
	if ((size_t)t->next_pid * 2 > t->slots && grow_lanes(t)) /* room for one more */
		return -1;
	struct lane *l = &t->lanes[slot_of(t->lanes, t->slots, lane)];
	if (l->name)
		return l->pid;
	l->name = strdup(lane);
	if (!l->name)
		return -1;
	l->pid = t->next_pid++;
	char name[512], ev[800];
	json_escape(lane, name, sizeof(name));
	snprintf(ev, sizeof(ev), "{\"name\": \"process_name\", \"ph\": \"M\", \"pid\": %d, "
		 "\"args\": {\"name\": \"%s\"}}", l->pid, name);
	emit(t, ev);
	snprintf(ev, sizeof(ev), "{\"name\": \"process_sort_index\", \"ph\": \"M\", \"pid\": %d, "
		 "\"args\": {\"sort_index\": %d}}", l->pid, l->pid);
	emit(t, ev);
	return l->pid;
}

static void event(struct timeline *t, const char *lane, const char *ph,
		  const char *name, const char *args_json)
{
	if (!t)
		return;
	pthread_mutex_lock(&t->lock);
	int pid = lane_pid(t, lane);
	if (pid >= 0) {
		char ev[1024], esc[512] = "";
		long long ts = (long long)((runtime_now() - t->start) * 1e6);
		if (name)
			json_escape(name, esc, sizeof(esc));
		int w = snprintf(ev, sizeof(ev), "{\"ph\": \"%s\", ", ph);
		if (name)
			w += snprintf(ev + w, sizeof(ev) - (size_t)w, "\"name\": \"%s\", ", esc);
		w += snprintf(ev + w, sizeof(ev) - (size_t)w, "\"ts\": %lld, \"pid\": %d", ts, pid);
		if (!strcmp(ph, "X"))
			w += snprintf(ev + w, sizeof(ev) - (size_t)w, ", \"dur\": 0");
		if (args_json)
			w += snprintf(ev + w, sizeof(ev) - (size_t)w, ", \"args\": {%s}", args_json);
		if ((size_t)w + 2 < sizeof(ev)) {
			strcat(ev, "}");
			emit(t, ev);
		}
	}
	pthread_mutex_unlock(&t->lock);
}

void timeline_begin(struct timeline *t, const char *lane, const char *phase)
{
	event(t, lane, "B", phase, NULL);
}

void timeline_end(struct timeline *t, const char *lane, const char *args_json)
{
	event(t, lane, "E", NULL, args_json);
}

void timeline_tick(struct timeline *t, const char *lane, const char *name)
{
	event(t, lane, "X", name, NULL);
}

void timeline_close(struct timeline *t)
{
	if (!t)
		return;
	fclose(t->f);
	for (size_t i = 0; i < t->slots; i++)
		free(t->lanes[i].name);
	free(t->lanes);
	pthread_mutex_destroy(&t->lock);
	free(t);
}
