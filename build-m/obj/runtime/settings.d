build-m/obj/runtime/settings.o: runtime/settings.c runtime/settings.h
runtime/settings.h:
