#!/usr/bin/env python3
"""docker_libs.py BUILD K8S_DIR - the images of K8S_DIR (Dockerfile: CPU,
Dockerfile.gpu: GPU) against the shared libraries BUILD/chexnet loads.
Every library `ldd BUILD/chexnet` lists, and cuBLAS, which chexnet opens
with dlopen, with the libraries it links, is either owned by a Debian
package (`dpkg -S`) or lies under CUDA_HOME (BUILD/config.mk's, else
/usr/local/cuda); one that is neither, or that is not found, fails.
Each image's runtime stage (its last FROM) must install by `apt-get
install`: the package of every Debian library the binary names itself
(ELF NEEDED); and, through those packages' Depends and Pre-Depends as dpkg
records them here, the package of every other Debian library ldd lists;
and nothing that owns none of them. The CUDA libraries are listed
separately: each must have a `# cuda-lib: SONAME PACKAGE` row in
Dockerfile.gpu whose PACKAGE its runtime stage installs and whose name
carries the soname's major version; a row for a library the binary does
not load fails. ARG defaults are substituted. Prints the library ->
package table; exit 1 with every problem named.
What it does not do: build or run an image (no container runtime here),
or know NVIDIA's repository beyond the names in the table.
"""
import os
import re
import subprocess
import sys


def run(argv):
    return subprocess.run(argv, capture_output=True, text=True)


def cuda_home(build):
    try:
        with open(os.path.join(build, "config.mk")) as f:
            m = re.search(r"^# key: .*?\bCUDA_HOME=(\S+)", f.read(), re.M)
            if m:
                return m.group(1)
    except OSError:
        pass
    return os.environ.get("CUDA_HOME", "/usr/local/cuda")


def ldd(binary):
    """[(soname, path or None)]; the vDSO left out."""
    out, libs = run(["ldd", binary]).stdout, []
    for line in out.splitlines():
        line = line.strip()
        m = re.match(r"(\S+) => (not found|(\S+) \(0x[0-9a-f]+\))", line)
        if m:
            libs.append((m.group(1), None if m.group(2) == "not found" else m.group(3)))
        elif line.startswith("/"):
            libs.append((os.path.basename(line.split()[0]), line.split()[0]))
    return libs


def opened(binary, cuda):
    """[(soname, path)]: the CUDA libraries chexnet opens with dlopen
    (cuBLAS, gpu_cublas.c: its soname is a string of the binary) and the
    ones they link, found under cuda/lib64; ldd lists none of them."""
    with open(binary, "rb") as f:
        names = sorted(set(re.findall(rb"\blibcublas\.so\.[0-9]+\b", f.read())))
    libs = []
    for name in names:
        soname = name.decode()
        path = os.path.join(cuda, "lib64", soname)
        libs.append((soname, path if os.path.exists(path) else None))
        if os.path.exists(path):
            libs += [(s, p) for s, p in ldd(path)
                     if p and os.path.realpath(p).startswith(cuda + "/")]
    return libs


def needed(binary):
    out = run(["readelf", "-d", binary]).stdout
    return re.findall(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]", out)


def owners(paths):
    """{path: the Debian package that owns it} (usrmerge: /lib and /usr/lib),
    in one dpkg-query call."""
    cands = {}
    for path in paths:
        for p in (path, os.path.realpath(path)):
            for c in (p, p[4:] if p.startswith("/usr/") else "/usr" + p):
                cands.setdefault(c, path)
    found = {}
    for line in run(["dpkg-query", "-S"] + list(cands)).stdout.splitlines():
        m = re.match(r"([^:,\s]+)(?::\S+)?: (/\S+)$", line)
        if m and m.group(2) in cands:
            found.setdefault(cands[m.group(2)], m.group(1))
    return found


def installed_packages():
    """{name: (depends, provides)} of the packages dpkg has installed."""
    fmt = "${db:Status-Status}\t${Package}\t${Depends}, ${Pre-Depends}\t${Provides}\n"
    pkgs = {}
    for line in run(["dpkg-query", "-W", "-f=" + fmt]).stdout.splitlines():
        st, name, deps, prov = (line.split("\t") + ["", "", "", ""])[:4]
        if st != "installed":
            continue
        alts = []
        for d in deps.split(","):
            names = [a.split()[0].split(":")[0] for a in d.split("|") if a.strip()]
            if names:
                alts.append(names)
        pkgs[name] = (alts, [p.split()[0] for p in prov.split(",") if p.strip()])
    return pkgs


def closure(roots, pkgs):
    providers = {}
    for name, (_, prov) in pkgs.items():
        for p in prov:
            providers.setdefault(p, []).append(name)
    seen, todo = set(), list(roots)
    while todo:
        p = todo.pop()
        if p in seen or p not in pkgs:
            continue
        seen.add(p)
        for alts in pkgs[p][0]:
            for a in alts:   # the first alternative installed here
                hit = [a] if a in pkgs else providers.get(a, [])
                if hit:
                    todo += hit[:1]
                    break
    return seen


def dockerfile(path):
    """(runtime stage's apt-get install packages, {soname: package} rows)."""
    with open(path) as f:
        text = f.read()
    rows = dict(re.findall(r"^#\s*cuda-lib:\s*(\S+)\s+(\S+)", text, re.M))
    logical = re.sub(r"\\\n", " ", "\n".join(l for l in text.splitlines()
                                              if not l.lstrip().startswith("#")))
    args, stage = {}, []
    for line in logical.splitlines():
        words = line.split()
        if not words:
            continue
        if words[0].upper() == "ARG" and "=" in words[1]:
            k, v = words[1].split("=", 1)
            args[k] = v
        elif words[0].upper() == "FROM":
            stage = []
        else:
            stage.append(line)
    pkgs = []
    for line in stage:
        line = re.sub(r"\$\{(\w+)\}|\$(\w+)", lambda m: args.get(m.group(1) or m.group(2), m.group(0)),
                      line)
        for seg in re.split(r"&&|;|\|", line):
            w = seg.split()
            if "apt-get" in w and "install" in w:
                pkgs += [x for x in w[w.index("install") + 1:] if not x.startswith("-")]
    return pkgs, rows


def main(build, k8s):
    binary = os.path.join(build, "chexnet")
    problems, table = [], []
    cuda = os.path.realpath(cuda_home(build))
    deb, cuda_libs = {}, []
    libs = ldd(binary)
    libs += [lib for lib in opened(binary, cuda) if lib[0] not in [s for s, _ in libs]]
    owned = owners([p for _, p in libs if p])
    for soname, path in libs:
        if path is None:
            problems.append("%s: not found by ldd %s" % (soname, binary))
        elif os.path.realpath(path).startswith(cuda + "/"):
            cuda_libs.append(soname)
            table.append((soname, "CUDA_HOME " + cuda))
        else:
            pkg = owned.get(path)
            table.append((soname, pkg or "-"))
            if pkg:
                deb[soname] = pkg
            else:
                problems.append("%s (%s): owned by no Debian package and not under CUDA_HOME %s"
                                % (soname, path, cuda))
    direct = needed(binary)
    if not direct:
        problems.append("%s: readelf found no NEEDED library" % binary)
    pkgs = installed_packages()
    cpu, _ = dockerfile(os.path.join(k8s, "Dockerfile"))
    gpu, rows = dockerfile(os.path.join(k8s, "Dockerfile.gpu"))
    cuda_pkgs = set(rows.values())
    for name, listed in (("Dockerfile", cpu), ("Dockerfile.gpu", [p for p in gpu if p not in cuda_pkgs])):
        if not listed:
            problems.append("%s: no apt-get install in the runtime stage" % name)
        brought = closure(listed, pkgs)
        for soname, pkg in deb.items():
            if soname in direct and pkg not in listed:
                problems.append("%s: the runtime stage does not install %s (%s, which chexnet "
                                "names itself)" % (name, pkg, soname))
            elif pkg not in brought:
                problems.append("%s: nothing the runtime stage installs brings %s (%s)"
                                % (name, pkg, soname))
        for pkg in listed:
            if pkg not in deb.values():
                problems.append("%s: installs %s, which owns no library chexnet loads"
                                % (name, pkg))
    for soname in cuda_libs:
        pkg = rows.get(soname)
        major = soname.split(".so.")[-1].split(".")[0]
        if not pkg:
            problems.append("Dockerfile.gpu: no '# cuda-lib: %s PACKAGE' row" % soname)
        elif pkg not in gpu:
            problems.append("Dockerfile.gpu: %s (for %s) is not installed by the runtime stage"
                            % (pkg, soname))
        elif not re.search(r"(?<![0-9])%s(?![0-9])" % re.escape(major), pkg):
            problems.append("Dockerfile.gpu: %s (for %s) does not carry major version %s"
                            % (pkg, soname, major))
    if cuda_libs:
        for soname in rows:
            if soname not in cuda_libs:
                problems.append("Dockerfile.gpu: row for %s, which chexnet does not load" % soname)
    else:
        print("no library under CUDA_HOME %s: this build has no CUDA; the cuda-lib rows are "
              "not checked" % cuda)
    for soname, where in table:
        print("%-32s %s" % (soname, where))
    return problems


if __name__ == "__main__":
    problems = main(sys.argv[1], sys.argv[2])
    for p in problems:
        print("docker_libs: " + p, file=sys.stderr)
    sys.exit(1 if problems else 0)
