build-m/obj/tests/layer_cases.o: tests/layer_cases.c tests/runner.h \
 tests/layer_cases.h trainer/backend/backend.h trainer/base/batch.h \
 trainer/base/error.h trainer/model/model.h trainer/base/rng.h
tests/runner.h:
tests/layer_cases.h:
trainer/backend/backend.h:
trainer/base/batch.h:
trainer/base/error.h:
trainer/model/model.h:
trainer/base/rng.h:
