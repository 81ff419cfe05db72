build-m/obj/tests/gpu_audit_policy.o: tests/gpu_audit_policy.c \
 tests/gpu_audit.h
tests/gpu_audit.h:
