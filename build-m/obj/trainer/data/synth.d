build-m/obj/trainer/data/synth.o: trainer/data/synth.c \
 trainer/base/args.h trainer/data/labels.h trainer/base/batch.h \
 trainer/base/classes.h trainer/data/split.h trainer/data/set.h \
 trainer/data/list.h trainer/data/synth.h trainer/data/image_encode.h
trainer/base/args.h:
trainer/data/labels.h:
trainer/base/batch.h:
trainer/base/classes.h:
trainer/data/split.h:
trainer/data/set.h:
trainer/data/list.h:
trainer/data/synth.h:
trainer/data/image_encode.h:
