/* models.c - the networks by name, for the command line.
 * What it does not do: build them (model/densenet.c, model/resnet.c).
 */
#include <string.h>

#include "model/model.h"

int model_by_name(struct model_desc *d, const char *name, int image_size,
		  int classes, struct trainer_error *err)
{
	if (strcmp(name, "densenet121") == 0)
		return model_densenet(d, &densenet121_config, image_size, classes, err);
	if (strcmp(name, "resnet50") == 0)
		return model_resnet50(d, image_size, classes, err);
	return trainer_error_set(err, "--model: '%s': expected densenet121 or resnet50", name);
}
