/* classes.c - the 14 CheXNet class names (classes.h). */
#include "base/classes.h"

const char *const data_class_names[CHEXNET_CLASSES] = {
	"Atelectasis", "Cardiomegaly", "Effusion", "Infiltration", "Mass",
	"Nodule", "Pneumonia", "Pneumothorax", "Consolidation", "Edema",
	"Emphysema", "Fibrosis", "Pleural_Thickening", "Hernia",
};
