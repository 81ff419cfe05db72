#!/usr/bin/env python3
"""k8s_manifest.py - checks contrib/k8s against itself and the runtime's
launch contract, without a cluster (tests/test_env_contrib.c runs it):
the YAML parses; the Service is headless, selects the Job's pods and
publishes not-ready addresses; the Job is Indexed with parallelism =
completions = HVD_SIZE, fails as a whole (backoffLimitPerIndex 0, a
FailJob podFailurePolicy), restartPolicy Never, a grace period for the
SIGTERM checkpoint, pods in the Service's subdomain; HVD_COORDINATOR is
rank 0's pod name in that subdomain with the Service's port; one
nvidia.com/gpu and CPU/memory requests; HVD_SECRET_FILE is the path where
the Secret volume puts its key, mode 0400; both Dockerfiles install the
binary the pod runs, its image is the one Dockerfile.gpu's build line
tags, and its command leaves the backend to chexnet with --precision auto. Prints the container's environment for index 0 as
NAME=value lines (the C test feeds them to the runtime's parsers), then
`COMMAND=` and the pod's shell command. Exit 1 with every problem listed.
What it does not do: talk to a cluster or run the image.
"""
import os
import re
import sys

import yaml


def main(k8s_dir):
    problems = []

    def need(cond, what):
        if not cond:
            problems.append(what)
        return cond

    docs = []
    for name in sorted(os.listdir(k8s_dir)):
        if name.endswith((".yaml", ".yml")):
            with open(os.path.join(k8s_dir, name)) as f:
                docs += [d for d in yaml.safe_load_all(f) if d]
    svc = next((d for d in docs if d.get("kind") == "Service"), None)
    job = next((d for d in docs if d.get("kind") == "Job"), None)
    if not need(svc and job, "one Service and one Job"):
        return problems, {}, ""
    ss, js = svc["spec"], job["spec"]
    pod = js["template"]["spec"]
    job_name, svc_name = job["metadata"]["name"], svc["metadata"]["name"]
    need(ss.get("clusterIP") == "None", "Service: clusterIP: None (headless)")
    need(ss.get("publishNotReadyAddresses") is True, "Service: publishNotReadyAddresses: true")
    need(ss.get("selector") == {"job-name": job_name}, "Service: selector job-name: " + job_name)
    need(js.get("completionMode") == "Indexed", "Job: completionMode: Indexed")
    need(js.get("backoffLimitPerIndex") == 0, "Job: backoffLimitPerIndex: 0")
    rules = js.get("podFailurePolicy", {}).get("rules", [])
    need(any(r.get("action") == "FailJob" and "onExitCodes" in r for r in rules),
         "Job: a podFailurePolicy rule FailJob on exit codes")
    need(pod.get("restartPolicy") == "Never", "pod: restartPolicy: Never")
    need(pod.get("subdomain") == svc_name, "pod: subdomain: " + svc_name)
    need(int(pod.get("terminationGracePeriodSeconds", 0)) >= 60,
         "pod: terminationGracePeriodSeconds >= 60 (the SIGTERM checkpoint)")
    (c,) = pod["containers"]
    env = {e["name"]: str(e["value"]) for e in c.get("env", [])}
    size = int(env.get("HVD_SIZE", "0"))
    need(js.get("completions") == size and js.get("parallelism") == size,
         "Job: completions = parallelism = HVD_SIZE (%s, %s, %d)"
         % (js.get("completions"), js.get("parallelism"), size))
    port = next((p["port"] for p in ss.get("ports", [])), None)
    need(env.get("HVD_COORDINATOR") == "%s-0.%s:%s" % (job_name, svc_name, port),
         "HVD_COORDINATOR = %s-0.%s:%s (rank 0's pod), not %s"
         % (job_name, svc_name, port, env.get("HVD_COORDINATOR")))
    res = c.get("resources", {})
    need(str(res.get("limits", {}).get("nvidia.com/gpu")) == "1", "limits: nvidia.com/gpu: 1")
    need("cpu" in res.get("requests", {}) and "memory" in res.get("requests", {}),
         "requests: cpu and memory")
    vols = {v["name"]: v for v in pod.get("volumes", [])}
    secret_paths = []
    for m in c.get("volumeMounts", []):
        sec = vols.get(m["name"], {}).get("secret")
        if sec:
            need(sec.get("defaultMode") == 0o400, "Secret volume: defaultMode: 0400")
            for it in sec.get("items", []):
                secret_paths.append(m["mountPath"].rstrip("/") + "/" + it["path"])
    need(env.get("HVD_SECRET_FILE") in secret_paths,
         "HVD_SECRET_FILE %s is where the Secret volume puts its key (%s)"
         % (env.get("HVD_SECRET_FILE"), secret_paths))
    need(not any("/etc/hvd-secret" in a or "HVD_SECRET_FILE=" in a for a in c.get("args", [])),
         "the secret only through the environment, never on the command line")
    command = "\n".join(c.get("args", []))
    images = {}
    for name in ("Dockerfile", "Dockerfile.gpu"):
        with open(os.path.join(k8s_dir, name)) as f:
            docker = f.read()
        need(docker.startswith("#") and "FROM debian:" in docker, name + ": FROM debian:")
        need("/usr/local/bin/chexnet" in command and "/usr/local/bin/chexnet" in docker,
             "the pod runs the binary %s installs (/usr/local/bin/chexnet)" % name)
        tag = re.search(r"docker build -f contrib/k8s/%s -t (\S+) \." % re.escape(name), docker)
        if need(tag, name + ": a 'docker build -f contrib/k8s/%s -t IMAGE .' line" % name):
            images[name] = tag.group(1)
    need(c.get("image") == images.get("Dockerfile.gpu"),
         "the pod asks for a GPU: its image is Dockerfile.gpu's (%s), not %s"
         % (images.get("Dockerfile.gpu"), c.get("image")))
    need(not re.search(r"--backend (?!auto)", command),
         "the pod leaves --backend to chexnet (auto: the GPU when usable)")
    need("--precision auto" in command, "the pod passes --precision auto")
    env["JOB_COMPLETION_INDEX"] = "0"
    return problems, env, command


if __name__ == "__main__":
    problems, env, command = main(sys.argv[1])
    for p in problems:
        print("k8s_manifest: " + p, file=sys.stderr)
    for k, v in env.items():
        print("%s=%s" % (k, v))
    print("COMMAND=" + command.replace("\n", "\\n"))
    sys.exit(1 if problems else 0)
