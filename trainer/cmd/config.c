/* cmd/config.c - the loops' configs and run.json's given settings from
 * a command's settings (cmd/config.h). */
#include <string.h>

#include "cmd/config.h"

struct session_config session_config_of(const struct settings *o)
{
	return (struct session_config){
		.model = o->model, .backend = o->backend, .chosen = o->chosen,
		.precision = o->precision, .precision_auto = o->precision_auto,
		.batch = o->batch, .size = o->size, .threads = o->threads, .seed = o->seed,
		.memory_efficient = o->memory_efficient, .conv_algorithms = o->conv_algorithms,
		.gpu_layout = o->gpu_layout, .cuda_graph = o->cuda_graph,
	};
}

struct data_config data_config_of(const struct settings *o)
{
	return (struct data_config){
		.dir = o->data, .synthetic_images = o->synthetic_images,
		.loader_threads = o->loader_threads, .stored_size = o->stored_size,
		.aspect = (enum image_aspect)o->aspect,
	};
}

struct train_config train_config_of(const struct settings *o)
{
	return (struct train_config){
		.session = session_config_of(o), .data = data_config_of(o),
		.steps = o->steps, .epochs = o->epochs, .out = o->out, .init = o->init,
		.resume = o->resume, .allow_changes = o->allow_changes, .shrink = o->shrink,
		.spares = o->spares, .overwrite = o->overwrite,
		.argc = o->argc, .argv = o->argv, .optim = o->optim, .lr = o->lr,
		.warmup_epochs = o->warmup_epochs, .lr_scale = o->lr_scale, .patience = o->patience,
		.accumulate = o->accumulate, .save_every = o->save_every,
		.test_at_end = o->test_at_end, .weighted_loss = o->weighted_loss,
		.progress_every = o->progress_every, .progress = o->progress,
		.sensitivity = o->sensitivity, .specificity = o->specificity,
		.bootstrap = o->bootstrap,
	};
}

struct eval_config eval_config_of(const struct settings *o)
{
	return (struct eval_config){
		.session = session_config_of(o), .data = data_config_of(o),
		.checkpoint = o->checkpoint, .split = o->split, .weighted_loss = o->weighted_loss,
	};
}

int record_of(const struct settings *o, struct run_settings *out, struct trainer_error *err)
{
	char value[RUN_SETTING_VALUE];

	memset(out, 0, sizeof(*out));
	for (int i = 0; i < settings_count; i++) {
		const struct setting *row = &settings_table[i];
		if (!row->flag || !row->key || row->resume == RESUME_SESSION)
			continue;
		option_format(o, row, value, sizeof(value));
		if (run_settings_set(out, row->key, value, err))
			return -1;
	}
	return 0;
}
