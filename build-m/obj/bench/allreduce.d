build-m/obj/bench/allreduce.o: bench/allreduce.c \
 /usr/lib/x86_64-linux-gnu/openmpi/include/mpi.h \
 /usr/lib/x86_64-linux-gnu/openmpi/include/mpi_portable_platform.h \
 bench/densenet121_grads.h runtime/hvd.h
/usr/lib/x86_64-linux-gnu/openmpi/include/mpi.h:
/usr/lib/x86_64-linux-gnu/openmpi/include/mpi_portable_platform.h:
bench/densenet121_grads.h:
runtime/hvd.h:
