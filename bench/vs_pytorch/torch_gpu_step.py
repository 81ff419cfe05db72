"""torch_gpu_step.py - PyTorch's side of bench/gpu_vs_torch.sh (bench, not a
test): the step `chexnet bench --backend gpu` times, in PyTorch on the same
GPU. torchvision densenet121(num_classes=14), channels_last, Adam (lr 1e-4,
as chexnet bench), BCEWithLogits, torch.backends.cudnn.benchmark = True;
mixed precision by autocast (bf16; fp16 with a GradScaler, as chexnet's
dynamic loss scale); fp32 as PyTorch runs it by default (cuDNN may use
TF32 tensor cores), fp32-ieee with TF32 off (true fp32, as chexnet's
fp32); `compile` wraps the model in torch.compile. Like
chexnet bench, one synthetic batch: uint8 gray pixels in pinned memory,
uploaded, normalised (ImageNet mean/std, 3 channels) and trained on every
step; warm-up steps first; the clock reads after torch.cuda.synchronize().
Prints one line:
    torch MODE PRECISION BATCH SIZE IMG_PER_S MAX_ALLOCATED_MIB
MAX_ALLOCATED_MIB is torch.cuda.max_memory_allocated() (PyTorch's own
tensors only); the device-memory column of the table is NVML's, taken
outside by the caller for both programs alike.
Usage: python3 torch_gpu_step.py eager|compile fp32|fp32-ieee|bf16|fp16 BATCH SIZE STEPS
Exit 2 with one line when torch, torchvision or a CUDA device is missing.
"""
import sys
import time


def fail(msg):
    print(f"torch_gpu_step.py: {msg}", file=sys.stderr)
    sys.exit(2)


def parse(argv):
    if len(argv) != 6 or argv[1] not in ("eager", "compile") or \
            argv[2] not in ("fp32", "fp32-ieee", "bf16", "fp16"):
        fail("usage: torch_gpu_step.py eager|compile fp32|fp32-ieee|bf16|fp16 BATCH SIZE STEPS")
    try:
        batch, size, steps = int(argv[3]), int(argv[4]), int(argv[5])
    except ValueError:
        fail(f"BATCH SIZE STEPS: '{argv[3]} {argv[4]} {argv[5]}': not integers")
    if batch < 1 or size < 32 or steps < 1:
        fail(f"BATCH {batch} SIZE {size} STEPS {steps}: need BATCH >= 1, SIZE >= 32, STEPS >= 1")
    return argv[1], argv[2], batch, size, steps


def main():
    mode, precision, batch, size, steps = parse(sys.argv)
    try:
        import torch
        import torchvision
    except ImportError as e:
        fail(f"cannot import torch/torchvision: {e}")
    if not torch.cuda.is_available():
        fail("no CUDA device (torch.cuda.is_available() is False)")
    dev = torch.device("cuda")
    torch.manual_seed(1)
    torch.backends.cudnn.benchmark = True
    if precision == "fp32-ieee":
        torch.backends.cudnn.allow_tf32 = False
        torch.backends.cuda.matmul.allow_tf32 = False
    model = torchvision.models.densenet121(num_classes=14)
    model = model.to(dev, memory_format=torch.channels_last).train()
    opt = torch.optim.Adam(model.parameters(), lr=1e-4)
    loss_fn = torch.nn.BCEWithLogitsLoss()
    net = torch.compile(model) if mode == "compile" else model
    dtype = {"bf16": torch.bfloat16, "fp16": torch.float16}.get(precision)
    scaler = torch.amp.GradScaler("cuda", enabled=precision == "fp16")
    pixels = torch.randint(0, 256, (batch, 1, size, size), dtype=torch.uint8).pin_memory()
    labels = (torch.rand(batch, 14) < 0.3).float().to(dev)
    mean = torch.tensor([0.485, 0.456, 0.406], device=dev).view(1, 3, 1, 1)
    std = torch.tensor([0.229, 0.224, 0.225], device=dev).view(1, 3, 1, 1)

    def step():
        x = pixels.to(dev, non_blocking=True).float().div_(255)
        x = ((x - mean) / std).contiguous(memory_format=torch.channels_last)
        opt.zero_grad(set_to_none=True)
        with torch.autocast("cuda", dtype=dtype or torch.float16, enabled=dtype is not None):
            out = net(x)
        loss = loss_fn(out.float(), labels)
        scaler.scale(loss).backward()
        scaler.step(opt)
        scaler.update()

    for _ in range(3 if mode == "eager" else 5):
        step()
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(steps):
        step()
    torch.cuda.synchronize()
    seconds = time.perf_counter() - t0
    peak = torch.cuda.max_memory_allocated() / 2**20
    print(f"torch {mode} {precision} {batch} {size} {steps * batch / seconds:.2f} {peak:.0f}")


if __name__ == "__main__":
    main()
