build-m/obj/runtime/timeline.o: runtime/timeline.c runtime/timeline.h
runtime/timeline.h:
