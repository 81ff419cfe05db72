build-m/obj/tests/test_multinode_train.o: tests/test_multinode_train.c \
 tests/ckpt_compare.h tests/runner.h trainer/train/safetensors.h \
 trainer/base/error.h
tests/ckpt_compare.h:
tests/runner.h:
trainer/train/safetensors.h:
trainer/base/error.h:
