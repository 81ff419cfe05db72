build-m/obj/trainer/cmd/synth.o: trainer/cmd/synth.c trainer/base/args.h \
 trainer/data/synth.h trainer/base/batch.h
trainer/base/args.h:
trainer/data/synth.h:
trainer/base/batch.h:
