build-m/obj/tests/test_span.o: tests/test_span.c \
 trainer/backend/gpu/gpu_train.h trainer/backend/backend.h \
 trainer/base/batch.h trainer/base/error.h trainer/model/model.h \
 trainer/train/hooks.h tests/runner.h trainer/train/span.h
trainer/backend/gpu/gpu_train.h:
trainer/backend/backend.h:
trainer/base/batch.h:
trainer/base/error.h:
trainer/model/model.h:
trainer/train/hooks.h:
tests/runner.h:
trainer/train/span.h:
