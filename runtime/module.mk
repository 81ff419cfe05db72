# runtime/module.mk - (filled in by the runtime work)
