# trainer/data.mk - input pipeline sources (DATA_SRCS), linked into chexnet and the tests.
