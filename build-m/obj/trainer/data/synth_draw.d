build-m/obj/trainer/data/synth_draw.o: trainer/data/synth_draw.c \
 trainer/data/split.h trainer/data/set.h trainer/data/list.h \
 trainer/data/synth.h trainer/base/batch.h
trainer/data/split.h:
trainer/data/set.h:
trainer/data/list.h:
trainer/data/synth.h:
trainer/base/batch.h:
