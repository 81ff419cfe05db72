build-m/obj/trainer/data/order.o: trainer/data/order.c \
 trainer/data/order.h trainer/data/split.h trainer/data/set.h \
 trainer/data/list.h
trainer/data/order.h:
trainer/data/split.h:
trainer/data/set.h:
trainer/data/list.h:
