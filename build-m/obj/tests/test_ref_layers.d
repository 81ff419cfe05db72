build-m/obj/tests/test_ref_layers.o: tests/test_ref_layers.c \
 tests/runner.h trainer/backend/backend.h trainer/base/batch.h \
 trainer/base/error.h trainer/model/model.h tests/layer_cases.h \
 trainer/model/loss.h trainer/base/rng.h
tests/runner.h:
trainer/backend/backend.h:
trainer/base/batch.h:
trainer/base/error.h:
trainer/model/model.h:
tests/layer_cases.h:
trainer/model/loss.h:
trainer/base/rng.h:
