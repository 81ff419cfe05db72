build-m/obj/trainer/train/optim.o: trainer/train/optim.c \
 trainer/train/optim.h trainer/base/error.h trainer/train/hooks.h
trainer/train/optim.h:
trainer/base/error.h:
trainer/train/hooks.h:
