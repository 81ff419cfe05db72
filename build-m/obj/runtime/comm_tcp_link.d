build-m/obj/runtime/comm_tcp_link.o: runtime/comm_tcp_link.c \
 runtime/comm.h runtime/hvd.h runtime/comm_tcp.h runtime/auth.h \
 runtime/sha256.h runtime/bootstrap.h
runtime/comm.h:
runtime/hvd.h:
runtime/comm_tcp.h:
runtime/auth.h:
runtime/sha256.h:
runtime/bootstrap.h:
