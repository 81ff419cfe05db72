#!/usr/bin/env python3
"""k8s_validate.py SRC - contrib/k8s/chexnet-job.yaml against the
Kubernetes API schema of every version it claims, with the real checker
(PyPI kubernetes-validate, `--strict`: unknown fields fail too). The
manifest's header and README.md each state the minimum as "Kubernetes
X.Y or newer"; both must say the same, and every version from X.Y up to
the newest the installed kubernetes-validate knows must pass. Prints one
line per version; exit 1 with each problem named. Runs in BUILD/pyenv
(tests/pyenv.sh). What it does not do: talk to a cluster, or check the
manifest against the runtime (tests/k8s_manifest.py does).
"""
import os
import re
import subprocess
import sys

from kubernetes_validate import utils

CLAIM = re.compile(r"Kubernetes (\d+)\.(\d+) or newer")


def claimed(path):
    with open(path) as f:
        m = CLAIM.search(f.read())
    return (int(m.group(1)), int(m.group(2))) if m else None


def main(src):
    manifest = os.path.join(src, "contrib/k8s/chexnet-job.yaml")
    checker = os.path.join(os.path.dirname(sys.executable), "kubernetes-validate")
    problems = []
    lowest, readme = claimed(manifest), claimed(os.path.join(src, "README.md"))
    if not lowest:
        return ["%s: no 'Kubernetes X.Y or newer' line" % manifest]
    if readme != lowest:
        problems.append("README.md states the minimum as %s, the manifest as %s" % (readme, lowest))
    known = sorted({tuple(int(x) for x in v.split(".")[:2]) for v in utils.all_versions()})
    if lowest not in known:
        return problems + ["kubernetes-validate %s has no schema for %d.%d (it knows %d.%d to %d.%d)"
                           % ((utils.__version__,) + lowest + known[0] + known[-1])]
    for v in [v for v in known if v >= lowest]:
        version = "%d.%d" % v
        r = subprocess.run([checker, "--strict", "--quiet", "-k", version, manifest],
                           capture_output=True, text=True)
        print("k8s %s: %s" % (version, "ok" if r.returncode == 0 else "FAIL"))
        if r.returncode != 0:
            problems.append("Kubernetes %s: %s" % (version, (r.stdout + r.stderr).strip()))
    return problems


if __name__ == "__main__":
    problems = main(sys.argv[1])
    for p in problems:
        print("k8s_validate: " + p, file=sys.stderr)
    sys.exit(1 if problems else 0)
