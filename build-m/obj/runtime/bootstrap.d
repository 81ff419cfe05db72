build-m/obj/runtime/bootstrap.o: runtime/bootstrap.c runtime/bootstrap.h \
 runtime/bootstrap_env.h /usr/lib/x86_64-linux-gnu/pmix2/include/pmix.h \
 /usr/lib/x86_64-linux-gnu/pmix2/include/pmix_common.h \
 /usr/lib/x86_64-linux-gnu/pmix2/include/pmix_version.h \
 /usr/lib/x86_64-linux-gnu/pmix2/include/pmix_deprecated.h runtime/hvd.h
runtime/bootstrap.h:
runtime/bootstrap_env.h:
/usr/lib/x86_64-linux-gnu/pmix2/include/pmix.h:
/usr/lib/x86_64-linux-gnu/pmix2/include/pmix_common.h:
/usr/lib/x86_64-linux-gnu/pmix2/include/pmix_version.h:
/usr/lib/x86_64-linux-gnu/pmix2/include/pmix_deprecated.h:
runtime/hvd.h:
