build-m/obj/tests/test_cpu_models.o: tests/test_cpu_models.c \
 tests/runner.h tests/cpu_isa_caps.h trainer/backend/cpu/cpu_isa.h \
 trainer/backend/backend.h trainer/base/batch.h trainer/base/error.h \
 trainer/model/model.h trainer/model/loss.h trainer/base/rng.h \
 trainer/backend/cpu/backend_cpu.h trainer/backend/cpu/dnnl_ctx.h
tests/runner.h:
tests/cpu_isa_caps.h:
trainer/backend/cpu/cpu_isa.h:
trainer/backend/backend.h:
trainer/base/batch.h:
trainer/base/error.h:
trainer/model/model.h:
trainer/model/loss.h:
trainer/base/rng.h:
trainer/backend/cpu/backend_cpu.h:
trainer/backend/cpu/dnnl_ctx.h:
