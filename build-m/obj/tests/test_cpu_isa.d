build-m/obj/tests/test_cpu_isa.o: tests/test_cpu_isa.c tests/runner.h \
 trainer/backend/backend.h trainer/base/batch.h trainer/base/error.h \
 trainer/model/model.h tests/cpu_isa_caps.h trainer/backend/cpu/cpu_isa.h \
 trainer/backend/cpu/dnnl_ctx.h
tests/runner.h:
trainer/backend/backend.h:
trainer/base/batch.h:
trainer/base/error.h:
trainer/model/model.h:
tests/cpu_isa_caps.h:
trainer/backend/cpu/cpu_isa.h:
trainer/backend/cpu/dnnl_ctx.h:
