build-m/obj/trainer/data/loader.o: trainer/data/loader.c \
 trainer/base/clock.h trainer/data/labels.h trainer/base/batch.h \
 trainer/base/classes.h trainer/data/loader.h trainer/data/order.h \
 trainer/data/source.h trainer/data/set.h trainer/data/list.h \
 trainer/data/shard.h trainer/data/image_resize.h
trainer/base/clock.h:
trainer/data/labels.h:
trainer/base/batch.h:
trainer/base/classes.h:
trainer/data/loader.h:
trainer/data/order.h:
trainer/data/source.h:
trainer/data/set.h:
trainer/data/list.h:
trainer/data/shard.h:
trainer/data/image_resize.h:
