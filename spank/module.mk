# spank/module.mk - (filled in by the spank work)
