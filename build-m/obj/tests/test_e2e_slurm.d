build-m/obj/tests/test_e2e_slurm.o: tests/test_e2e_slurm.c \
 trainer/backend/backend.h trainer/base/batch.h trainer/base/error.h \
 trainer/model/model.h tests/ckpt_compare.h tests/runner.h \
 trainer/train/safetensors.h
trainer/backend/backend.h:
trainer/base/batch.h:
trainer/base/error.h:
trainer/model/model.h:
tests/ckpt_compare.h:
tests/runner.h:
trainer/train/safetensors.h:
