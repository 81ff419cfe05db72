# trainer/data.mk - input pipeline sources, linked into chexnet (by
# trainer/module.mk) and into the test runner.
DATA_SRCS := trainer/data_cmds.c
DATA_CFLAGS = $(SPNG_CFLAGS) $(TURBOJPEG_CFLAGS) $(ZLIB_CFLAGS)
DATA_LDLIBS = $(SPNG_LIBS) $(TURBOJPEG_LIBS) $(ZLIB_LIBS)
