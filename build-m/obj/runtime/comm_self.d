build-m/obj/runtime/comm_self.o: runtime/comm_self.c runtime/comm.h \
 runtime/hvd.h
runtime/comm.h:
runtime/hvd.h:
