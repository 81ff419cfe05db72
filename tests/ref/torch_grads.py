#!/usr/bin/python3
"""torch_grads.py - test-reference script (group cpu-torchvision): one
training step's parameter gradients of torchvision's
densenet121(num_classes=14) in fp32 on the CPU, from the parameters, input
and logit gradients a test wrote.

usage: torch_grads.py DIR N SIZE
DIR holds params.bin (float32: the trainer's parameter buffer), params.txt
(one line per parameter tensor: state_dict key, offset and count in
floats), x.bin (N, 3, SIZE, SIZE) and dy.bin (N, 14); the script writes
grads.bin in params.bin's layout. Batch norm in training mode (batch
statistics), as the trainer's training step. Exit 0, or 1 saying why.
"""
import sys

import torch
import torchvision


def read(path):
    with open(path, "rb") as f:
        return torch.frombuffer(bytearray(f.read()), dtype=torch.float32)


def main():
    folder, n, size = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    model = torchvision.models.densenet121(num_classes=14)
    named = dict(model.named_parameters())
    flat = read(folder + "/params.bin")
    with open(folder + "/params.txt") as f:
        index = [(k, int(o), int(c)) for k, o, c in (line.split() for line in f if line.strip())]
    if sorted(named) != sorted(k for k, _, _ in index):
        print("params.txt does not name torchvision's parameters")
        return 1
    with torch.no_grad():
        for key, off, count in index:
            p = named[key]
            if p.numel() != count:
                print(f"{key}: {count} floats, torchvision has {p.numel()}")
                return 1
            p.copy_(flat[off:off + count].reshape(p.shape))
    x = read(folder + "/x.bin").reshape(n, 3, size, size)
    dy = read(folder + "/dy.bin").reshape(n, 14)
    model.train()
    model(x).backward(dy)
    out = torch.zeros_like(flat)
    for key, off, count in index:
        out[off:off + count] = named[key].grad.reshape(-1)
    with open(folder + "/grads.bin", "wb") as f:
        f.write(out.numpy().tobytes())
    return 0


if __name__ == "__main__":
    sys.exit(main())
