"""torch_step.py - PyTorch's best CPU configurations of the CheXNet step
(bench, not a test): torchvision densenet121(num_classes=14), BCEWithLogits,
Adam, batch 16 (or BATCH), 224x224, 2 threads, channels_last, fp32 or bf16
autocast. Prints one line: `torch <precision> <img/s> <peak RSS MiB>`.
Usage: VENV/bin/python3 torch_step.py fp32|bf16 STEPS [BATCH] (run.sh makes
the venv)
"""
import resource
import sys
import time

import torch
import torchvision


def main():
    precision, steps = sys.argv[1], int(sys.argv[2])
    batch = int(sys.argv[3]) if len(sys.argv) > 3 else 16
    torch.set_num_threads(2)
    torch.manual_seed(1)
    model = torchvision.models.densenet121(num_classes=14)
    model = model.to(memory_format=torch.channels_last).train()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    loss_fn = torch.nn.BCEWithLogitsLoss()
    x = torch.randn(batch, 3, 224, 224).to(memory_format=torch.channels_last)
    y = (torch.rand(batch, 14) < 0.3).float()
    times = []
    for _ in range(steps + 1):
        t0 = time.perf_counter()
        opt.zero_grad(set_to_none=True)
        with torch.autocast("cpu", dtype=torch.bfloat16, enabled=precision == "bf16"):
            out = model(x)
        loss = loss_fn(out.float(), y)
        loss.backward()
        opt.step()
        times.append(time.perf_counter() - t0)
    per_step = sorted(times[1:])[len(times[1:]) // 2]
    rss_mib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"torch {precision} {batch / per_step:.2f} {rss_mib:.0f}")


if __name__ == "__main__":
    main()
