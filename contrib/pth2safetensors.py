#!/usr/bin/env python3
"""pth2safetensors.py IN.pth OUT.safetensors - convert a PyTorch state dict
(e.g. torchvision's ImageNet DenseNet-121, densenet121-a639ec97.pth) into a
safetensors file that `chexnet train --init OUT.safetensors` accepts.

Runs with the user's own PyTorch (not a dependency of hvd). Writes the
safetensors format by hand (8-byte little-endian header length, JSON
header, raw little-endian data), so the `safetensors` package is not
needed. Old torchvision DenseNet checkpoints name layers
`denselayer1.norm.1`; they are renamed to the current `norm1` form, as
torchvision's own loader does. A `module.` prefix (DataParallel) is
stripped. The 1000-class classifier is kept: chexnet drops it with a
message when the model has 14 outputs.
"""
import json
import os
import re
import struct
import sys


def fail(msg):
    print(f"pth2safetensors: {msg}", file=sys.stderr)
    sys.exit(1)


def load_state_dict(path):
    try:
        import torch
    except ImportError:
        fail("needs PyTorch (pip install torch, or Debian's python3-torch)")
    obj = torch.load(path, map_location="cpu")
    if isinstance(obj, dict) and "state_dict" in obj and isinstance(obj["state_dict"], dict):
        obj = obj["state_dict"]
    if not isinstance(obj, dict):
        fail(f"'{path}': not a state dict")
    return obj


OLD_DENSENET = re.compile(r"^(.*denselayer\d+\.(?:norm|relu|conv))\.((?:[12])\.(?:weight|bias|running_mean|running_var))$")
DTYPES = {"torch.float32": "F32", "torch.float16": "F16", "torch.bfloat16": "BF16",
          "torch.int64": "I64", "torch.int32": "I32"}


def normalise_key(key):
    if key.startswith("module."):
        key = key[len("module."):]
    m = OLD_DENSENET.match(key)
    return m.group(1) + m.group(2) if m else key


def main():
    if len(sys.argv) != 3:
        fail("usage: pth2safetensors.py IN.pth OUT.safetensors")
    src, dst = sys.argv[1], sys.argv[2]
    state = load_state_dict(src)
    header, blobs, offset = {}, [], 0
    for key, tensor in state.items():
        name = normalise_key(key)
        dtype = DTYPES.get(str(tensor.dtype))
        if dtype is None:
            fail(f"'{key}': dtype {tensor.dtype} not supported")
        data = tensor.contiguous().cpu().numpy().tobytes()
        header[name] = {"dtype": dtype, "shape": list(tensor.shape),
                        "data_offsets": [offset, offset + len(data)]}
        blobs.append(data)
        offset += len(data)
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)
    tmp = dst + ".tmp"
    with open(tmp, "wb") as f:
        f.write(struct.pack("<Q", len(text)))
        f.write(text)
        for b in blobs:
            f.write(b)
        f.flush()
        os.fsync(f.fileno())
    os.rename(tmp, dst)
    print(f"wrote {dst}: {len(header)} tensors, {offset} bytes")


if __name__ == "__main__":
    main()
