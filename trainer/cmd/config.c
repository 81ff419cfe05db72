/* cmd/config.c - the loops' configs from the options (cmd/config.h). */
#include "cmd/config.h"

struct session_config session_config_of(const struct settings *o)
{
	return (struct session_config){
		.model = o->model, .backend = o->backend, .chosen = o->chosen,
		.precision = o->precision, .precision_auto = o->precision_auto,
		.batch = o->batch, .size = o->size, .threads = o->threads, .seed = o->seed,
		.memory_efficient = o->memory_efficient,
	};
}

struct data_config data_config_of(const struct settings *o)
{
	return (struct data_config){
		.dir = o->data, .synthetic_images = o->synthetic_images,
		.loader_threads = o->loader_threads, .batch = o->batch, .size = o->size,
		.stored_size = o->stored_size, .aspect = (enum image_aspect)o->aspect, .seed = o->seed,
	};
}

struct train_config train_config_of(const struct settings *o)
{
	return (struct train_config){
		.session = session_config_of(o), .data = data_config_of(o),
		.steps = o->steps, .epochs = o->epochs, .out = o->out, .init = o->init,
		.resume = o->resume, .allow_changes = o->allow_changes, .shrink = o->shrink, .overwrite = o->overwrite,
		.argc = o->argc, .argv = o->argv, .optim = o->optim, .lr = o->lr,
		.warmup_epochs = o->warmup_epochs, .lr_scale = o->lr_scale, .patience = o->patience,
		.accumulate = o->accumulate, .save_every = o->save_every,
		.test_at_end = o->test_at_end, .weighted_loss = o->weighted_loss,
		.progress_every = o->progress_every, .progress = o->progress,
		.sensitivity = o->sensitivity, .specificity = o->specificity,
	};
}

struct eval_config eval_config_of(const struct settings *o)
{
	return (struct eval_config){
		.session = session_config_of(o), .data = data_config_of(o),
		.checkpoint = o->checkpoint, .split = o->split, .weighted_loss = o->weighted_loss,
	};
}
