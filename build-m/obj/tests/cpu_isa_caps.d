build-m/obj/tests/cpu_isa_caps.o: tests/cpu_isa_caps.c \
 trainer/backend/backend.h trainer/base/batch.h trainer/base/error.h \
 trainer/model/model.h tests/cpu_isa_caps.h trainer/backend/cpu/cpu_isa.h
trainer/backend/backend.h:
trainer/base/batch.h:
trainer/base/error.h:
trainer/model/model.h:
tests/cpu_isa_caps.h:
trainer/backend/cpu/cpu_isa.h:
