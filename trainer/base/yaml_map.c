/* base/yaml_map.c - one YAML mapping of keys to single values (yaml_map.h),
 * walked as libyaml's events: stream, document, mapping, then key and
 * value scalars in turn until the mapping ends.
 * What it does not do: give the values a meaning or a type.
 */
#include <string.h>
#include <yaml.h>

#include "base/text_control.h"
#include "base/yaml_map.h"

struct walk {
	const char *name;
	struct yaml_map *m;
	struct trainer_error *err;
	int documents;
	int in_map;                 /* inside the document's mapping */
	int want_value;             /* a key was read: its value comes next */
};

static int refuse(struct walk *w, const yaml_event_t *e, const char *why)
{
	return trainer_error_set(w->err, "'%s': line %lu: %s", w->name,
				 (unsigned long)e->start_mark.line + 1, why);
}

static int copy(struct walk *w, const yaml_event_t *e, char *out, size_t cap, const char *what)
{
	const char *v = (const char *)e->data.scalar.value;
	size_t n = e->data.scalar.length;

	if (n >= cap || memchr(v, '\0', n))
		return trainer_error_set(w->err, "'%s': line %lu: a %s longer than %zu bytes", w->name,
					 (unsigned long)e->start_mark.line + 1, what, cap - 1);
	memcpy(out, v, n);
	out[n] = '\0';
	return text_control_at(out) >= 0 ? refuse(w, e, "a control character") : 0;
}

static int key(struct walk *w, const yaml_event_t *e)
{
	struct yaml_map *m = w->m;
	char k[YAML_MAP_KEY];

	if (copy(w, e, k, sizeof(k), "key"))
		return -1;
	if (!k[0])
		return refuse(w, e, "an empty key");
	for (int i = 0; i < m->count; i++)
		if (strcmp(m->entries[i].key, k) == 0)
			return trainer_error_set(w->err, "'%s': line %lu: '%s': given twice (line %d)",
						 w->name, (unsigned long)e->start_mark.line + 1, k,
						 m->entries[i].line);
	if (m->count == YAML_MAP_MAX)
		return refuse(w, e, "more keys than a recipe holds (128)");
	struct yaml_entry *it = &m->entries[m->count];
	memcpy(it->key, k, sizeof(k));
	it->line = (int)e->start_mark.line + 1;
	w->want_value = 1;
	return 0;
}

static int value(struct walk *w, const yaml_event_t *e)
{
	struct yaml_entry *it = &w->m->entries[w->m->count];

	if (copy(w, e, it->value, sizeof(it->value), "value"))
		return -1;
	it->plain = e->data.scalar.style == YAML_PLAIN_SCALAR_STYLE;
	w->m->count++;
	w->want_value = 0;
	return 0;
}

static int scalar(struct walk *w, const yaml_event_t *e)
{
	if (e->data.scalar.anchor || (e->data.scalar.tag && !e->data.scalar.plain_implicit &&
				      !e->data.scalar.quoted_implicit))
		return refuse(w, e, "an anchor or a tag: a recipe holds plain values");
	if (!w->in_map)
		return refuse(w, e, "not a mapping of keys to values");
	return w->want_value ? value(w, e) : key(w, e);
}

/* One event; 1 at the stream's end. */
static int step(struct walk *w, const yaml_event_t *e)
{
	switch (e->type) {
	case YAML_STREAM_START_EVENT:
	case YAML_NO_EVENT:
		return 0;
	case YAML_STREAM_END_EVENT:
		return 1;
	case YAML_DOCUMENT_START_EVENT:
		return ++w->documents > 1 ? refuse(w, e, "a second document") : 0;
	case YAML_DOCUMENT_END_EVENT:
		return 0;
	case YAML_MAPPING_START_EVENT:
		if (w->in_map)
			return refuse(w, e, w->want_value ? "a mapping as a value: one value a key"
				      : "a mapping as a key");
		if (e->data.mapping_start.anchor)
			return refuse(w, e, "an anchor or a tag: a recipe holds plain values");
		w->in_map = 1;
		return 0;
	case YAML_MAPPING_END_EVENT:
		w->in_map = 0;
		return 0;
	case YAML_SEQUENCE_START_EVENT:
		return refuse(w, e, w->in_map ? "a list as a value: one value a key"
			      : "not a mapping of keys to values");
	case YAML_ALIAS_EVENT:
		return refuse(w, e, "an alias: a recipe holds plain values");
	case YAML_SCALAR_EVENT:
		return scalar(w, e);
	default:
		return refuse(w, e, "not a mapping of keys to values");
	}
}

int yaml_map_parse(const char *name, const char *text, size_t len, struct yaml_map *m,
		   struct trainer_error *err)
{
	struct walk w = { .name = name, .m = m, .err = err };
	yaml_parser_t p;
	yaml_event_t e;
	int rc = 0;

	m->count = 0;
	if (memchr(text, '\0', len))
		return trainer_error_set(err, "'%s': a NUL byte: not text", name);
	if (!yaml_parser_initialize(&p))
		return trainer_error_set(err, "'%s': out of memory", name);
	yaml_parser_set_input_string(&p, (const unsigned char *)text, len);
	while (rc == 0) {
		if (!yaml_parser_parse(&p, &e)) {
			rc = trainer_error_set(err, "'%s': line %lu: not YAML: %s", name,
					       (unsigned long)p.problem_mark.line + 1,
					       p.problem ? p.problem : "unreadable");
			break;
		}
		rc = step(&w, &e);
		yaml_event_delete(&e);
	}
	yaml_parser_delete(&p);
	return rc < 0 ? -1 : 0;
}
