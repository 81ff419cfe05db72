# trainer/module.mk - (filled in by the trainer work)
