"""onnx_check.py - test-reference script, run in the tests' virtual
environment (tests/pyenv.sh: onnxruntime from PyPI): a model that
contrib/chexnet-onnx exported gives the probabilities `chexnet predict`
printed for the same image, within 1e-4, with the preprocessing read
from the model's own metadata only (chexnet.*), as a deployment would.
The image is 8-bit gray at the model's input size (the issue's "given at
the model's input size"), so the resize to the stored side and the
centre crop leave it as it is; anything else is refused.

usage: onnx_check.py MODEL.onnx IMAGE.png PREDICT_OUTPUT.txt
Exit 0 when all 14 agree, else 1 with the first differences.
"""
import json
import sys

import numpy as np
import onnxruntime
from PIL import Image


def main():
    model, image, predicted = sys.argv[1], sys.argv[2], sys.argv[3]
    session = onnxruntime.InferenceSession(model, providers=["CPUExecutionProvider"])
    meta = session.get_modelmeta().custom_metadata_map
    size, stored = int(meta["chexnet.size"]), int(meta["chexnet.stored_size"])
    classes = json.loads(meta["chexnet.classes"])
    mean = np.array(json.loads(meta["chexnet.mean"]), dtype=np.float32).reshape(3, 1, 1)
    std = np.array(json.loads(meta["chexnet.std"]), dtype=np.float32).reshape(3, 1, 1)
    assert meta["chexnet.scale"] == "x / 255" and meta["chexnet.channels"].startswith("gray")
    assert meta["chexnet.crop"].startswith(f"centre {size} x {size}")
    gray = np.asarray(Image.open(image).convert("L"), dtype=np.float32)
    assert gray.shape == (stored, stored) == (size, size), f"{gray.shape}: not {size} x {size}"
    x = (np.broadcast_to(gray / 255.0, (3, size, size)) - mean) / std
    (probs,) = session.run(["probabilities"], {"image": x[None].astype(np.float32)})
    with open(predicted) as f:
        lines = [line.split() for line in f if line.strip()]
    row = [line for line in lines if len(line) == 15 and line[0] != "image"]  # the table's row
    ours = [float(v) for v in row[0][1:]]
    assert len(classes) == 14 == len(ours)
    bad = [(classes[i], ours[i], float(probs[0][i])) for i in range(14)
           if abs(ours[i] - float(probs[0][i])) > 1e-4]
    for name, a, b in bad[:5]:
        print(f"{name}: chexnet {a:.6f} onnxruntime {b:.6f}")
    print("ok" if not bad else f"{len(bad)} of 14 differ")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
