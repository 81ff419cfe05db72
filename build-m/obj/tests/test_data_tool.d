build-m/obj/tests/test_data_tool.o: tests/test_data_tool.c \
 trainer/cmd/data_cmds.h
trainer/cmd/data_cmds.h:
