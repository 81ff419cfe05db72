build-m/obj/runtime/tests/hvd_attack.o: runtime/tests/hvd_attack.c \
 runtime/tests/../auth.h runtime/tests/../sha256.h \
 runtime/tests/../wire.h runtime/tests/../fusion.h runtime/tests/../hvd.h
runtime/tests/../auth.h:
runtime/tests/../sha256.h:
runtime/tests/../wire.h:
runtime/tests/../fusion.h:
runtime/tests/../hvd.h:
