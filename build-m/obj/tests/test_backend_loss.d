build-m/obj/tests/test_backend_loss.o: tests/test_backend_loss.c \
 trainer/backend/backend.h trainer/base/batch.h trainer/base/error.h \
 trainer/model/model.h trainer/model/loss.h trainer/base/rng.h \
 tests/runner.h
trainer/backend/backend.h:
trainer/base/batch.h:
trainer/base/error.h:
trainer/model/model.h:
trainer/model/loss.h:
trainer/base/rng.h:
tests/runner.h:
