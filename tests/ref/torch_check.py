#!/usr/bin/python3
"""torch_check.py - test-reference script: a chexnet checkpoint loads into
torchvision's densenet121(num_classes=14) with load_state_dict(strict=True)
and gives the same probabilities as `chexnet predict` on the same image.
The view is the checkpoint's own, read from its metadata as any PyTorch
user can (setting.stored_size, setting.aspect, setting.normalise): the
image is already square at the stored side, so predict's resize leaves it
as it is and both take its centre SIZE x SIZE (this script crops on its
own).

usage: torch_check.py CHECKPOINT_DIR SIZE IMAGE.png PREDICT_OUTPUT.txt
Exit 0 when every probability is within 1e-4, else 1 with the first
mismatches. Run by tests/test_cli.c only when torch and torchvision import.
"""
import struct
import sys
import json
import zlib

import torch
import torchvision


def load_safetensors(path):
    with open(path, "rb") as f:
        blob = f.read()
    (n,) = struct.unpack("<Q", blob[:8])
    header = json.loads(blob[8:8 + n])
    data = blob[8 + n:]
    dtypes = {"F32": torch.float32, "I64": torch.int64}
    state = {"__metadata__": header.get("__metadata__", {})}
    for key, entry in header.items():
        if key == "__metadata__":
            continue
        begin, end = entry["data_offsets"]
        t = torch.frombuffer(bytearray(data[begin:end]), dtype=dtypes[entry["dtype"]])
        state[key] = t.reshape(entry["shape"])
    return state


def read_png_gray(path):
    """8-bit grayscale, non-interlaced PNG (what chexnet's tests write)."""
    with open(path, "rb") as f:
        blob = f.read()
    pos, idat, width, height = 8, b"", 0, 0
    while pos < len(blob):
        (length,) = struct.unpack(">I", blob[pos:pos + 4])
        kind = blob[pos + 4:pos + 8]
        body = blob[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            width, height, depth, color = struct.unpack(">IIBB", body[:10])
            assert depth == 8 and color == 0, "test PNG must be 8-bit gray"
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    raw = zlib.decompress(idat)
    rows, prev, stride = [], bytearray(width), width + 1
    for y in range(height):
        ftype, line = raw[y * stride], bytearray(raw[y * stride + 1:(y + 1) * stride])
        for x in range(width):
            a = line[x - 1] if x else 0
            b, c = prev[x], prev[x - 1] if x else 0
            if ftype == 1:
                line[x] = (line[x] + a) & 255
            elif ftype == 2:
                line[x] = (line[x] + b) & 255
            elif ftype == 3:
                line[x] = (line[x] + (a + b) // 2) & 255
            elif ftype == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                pred = a if pa <= pb and pa <= pc else (b if pb <= pc else c)
                line[x] = (line[x] + pred) & 255
        rows.append(bytes(line))
        prev = line
    return torch.tensor(list(b"".join(rows)), dtype=torch.float32).reshape(height, width)


def main():
    ckpt, size, image, predicted = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
    model = torchvision.models.densenet121(num_classes=14)
    state = load_safetensors(ckpt + "/model.safetensors")
    meta = state.pop("__metadata__")
    model.load_state_dict(state, strict=True)
    model.eval()
    gray = read_png_gray(image)
    stored = int(meta["setting.stored_size"])
    assert meta["setting.aspect"] == "pad" and meta["setting.normalise"].startswith("x/255 gray")
    assert int(meta["setting.size"]) == size
    assert gray.shape == (stored, stored), f"the test image must be the stored side {stored}"
    off = (stored - size) // 2
    gray = gray[off:off + size, off:off + size]
    mean = torch.tensor([0.485, 0.456, 0.406]).reshape(3, 1, 1)
    std = torch.tensor([0.229, 0.224, 0.225]).reshape(3, 1, 1)
    x = ((gray / 255.0).expand(3, size, size) - mean) / std
    with torch.no_grad():
        probs = torch.sigmoid(model(x.unsqueeze(0)))[0]
    with open(predicted) as f:
        lines = [line.split() for line in f if line.strip()]
    ours = [float(v) for v in lines[-1][1:]]
    bad = [(i, ours[i], float(probs[i])) for i in range(14) if abs(ours[i] - float(probs[i])) > 1e-4]
    for i, a, b in bad[:5]:
        print(f"class {i}: chexnet {a:.6f} torch {b:.6f}")
    print("ok" if not bad else f"{len(bad)} of 14 differ")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
