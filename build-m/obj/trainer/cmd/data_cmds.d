build-m/obj/trainer/cmd/data_cmds.o: trainer/cmd/data_cmds.c \
 trainer/cmd/data_cmds.h
trainer/cmd/data_cmds.h:
