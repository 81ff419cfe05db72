build-m/obj/tests/test_cpu_layers.o: tests/test_cpu_layers.c \
 tests/runner.h trainer/backend/backend.h trainer/base/batch.h \
 trainer/base/error.h trainer/model/model.h tests/layer_cases.h \
 trainer/backend/cpu/dnnl_ctx.h trainer/backend/cpu/cpu_isa.h \
 tests/cpu_isa_caps.h
tests/runner.h:
trainer/backend/backend.h:
trainer/base/batch.h:
trainer/base/error.h:
trainer/model/model.h:
tests/layer_cases.h:
trainer/backend/cpu/dnnl_ctx.h:
trainer/backend/cpu/cpu_isa.h:
tests/cpu_isa_caps.h:
