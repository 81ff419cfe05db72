build-m/obj/runtime/comm_mpi.o: runtime/comm_mpi.c \
 /usr/lib/x86_64-linux-gnu/openmpi/include/mpi.h \
 /usr/lib/x86_64-linux-gnu/openmpi/include/mpi_portable_platform.h \
 runtime/comm.h runtime/hvd.h
/usr/lib/x86_64-linux-gnu/openmpi/include/mpi.h:
/usr/lib/x86_64-linux-gnu/openmpi/include/mpi_portable_platform.h:
runtime/comm.h:
runtime/hvd.h:
