/* data/image/image.c - frees a gray image (image.h). */
#include <stdlib.h>

#include "data/image/image.h"

void image_free(struct image *img)
{
	free(img->pixels);
	img->pixels = NULL;
	img->width = img->height = 0;
}
