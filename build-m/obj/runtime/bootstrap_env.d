build-m/obj/runtime/bootstrap_env.o: runtime/bootstrap_env.c \
 runtime/bootstrap_env.h
runtime/bootstrap_env.h:
