build-m/obj/trainer/base/crc32c.o: trainer/base/crc32c.c \
 trainer/base/crc32c.h
trainer/base/crc32c.h:
