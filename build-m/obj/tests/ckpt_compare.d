build-m/obj/tests/ckpt_compare.o: tests/ckpt_compare.c \
 tests/ckpt_compare.h tests/runner.h trainer/train/safetensors.h \
 trainer/base/error.h
tests/ckpt_compare.h:
tests/runner.h:
trainer/train/safetensors.h:
trainer/base/error.h:
