#!/usr/bin/env bash
# gen.sh - writes the hwloc XML test topologies of tests/topo (run once by
# hand; the XML files are committed). Each topology is: packages x cores x
# PUs, one NUMA node per package (or one for the machine), and NVIDIA GPUs
# (class 0302, vendor 10de) behind their own host bridge, either under the
# package that owns their PCI root or directly under Machine.
# What it does not do: describe caches or real PCI trees; placement only
# needs packages, cores, PUs, NUMA nodes and PCI locality.
set -eu
cd "$(dirname "$0")"

# mask FIRST LAST...: hwloc cpuset string for the listed PU ranges "a-b".
mask() {
	local -a words=()
	local r a b i w max=0
	for r in "$@"; do
		a=${r%-*}; b=${r#*-}
		for ((i = a; i <= b; i++)); do
			w=$((i / 32))
			words[w]=$(( ${words[w]:-0} | (1 << (i % 32)) ))
			((w > max)) && max=$w
		done
	done
	local out=""
	for ((i = max; i >= 0; i--)); do
		out+=$(printf '0x%08x' "${words[i]:-0}")
		((i > 0)) && out+=","
	done
	echo "$out"
}

gpu() {   # gpu BUSID INDENT
	cat <<X
$2<object type="Bridge" bridge_type="0-1" depth="0" bridge_pci="0000:[${1:5:2}-${1:5:2}]">
$2  <object type="PCIDev" pci_busid="$1" pci_type="0302 [10de:1db4] [10de:1212] a1" pci_link_speed="15.753846"/>
$2</object>
X
}

nic() {   # nic BUSID INDENT
	cat <<X
$2<object type="Bridge" bridge_type="0-1" depth="0" bridge_pci="0000:[${1:5:2}-${1:5:2}]">
$2  <object type="PCIDev" pci_busid="$1" pci_type="0207 [15b3:1017] [15b3:0007] 00" pci_link_speed="15.753846"/>
$2</object>
X
}

# topo FILE PACKAGES CORES PUS "GPUS of pkg0" "GPUS of pkg1" ... [under-machine GPUs via UNDER_MACHINE=1]
topo() {
	local file=$1 npkg=$2 ncore=$3 npu=$4
	shift 4
	local total=$((npkg * ncore * npu)) ncores=$((npkg * ncore))
	local all; all=$(mask "0-$((total - 1))")
	local allnodes; allnodes=$(mask "0-$((npkg - 1))")
	{
		echo '<?xml version="1.0" encoding="UTF-8"?>'
		echo '<!DOCTYPE topology SYSTEM "hwloc2.dtd">'
		echo '<topology version="2.0">'
		echo "  <object type=\"Machine\" os_index=\"0\" cpuset=\"$all\" complete_cpuset=\"$all\" allowed_cpuset=\"$all\" nodeset=\"$allnodes\" complete_nodeset=\"$allnodes\" allowed_nodeset=\"$allnodes\">"
		local p c t pu core
		for ((p = 0; p < npkg; p++)); do
			# PU numbering as Linux does it: first thread of every core, then the second
			local ranges=() pr
			for ((t = 0; t < npu; t++)); do
				ranges+=("$((t * ncores + p * ncore))-$((t * ncores + p * ncore + ncore - 1))")
			done
			pr=$(mask "${ranges[@]}")
			local node; node=$(mask "$p-$p")
			echo "    <object type=\"Package\" os_index=\"$p\" cpuset=\"$pr\" complete_cpuset=\"$pr\" nodeset=\"$node\" complete_nodeset=\"$node\">"
			echo "      <object type=\"NUMANode\" os_index=\"$p\" cpuset=\"$pr\" complete_cpuset=\"$pr\" nodeset=\"$node\" complete_nodeset=\"$node\" local_memory=\"68719476736\"/>"
			for ((c = 0; c < ncore; c++)); do
				core=$((p * ncore + c))
				local cr=()
				for ((t = 0; t < npu; t++)); do
					cr+=("$((t * ncores + core))-$((t * ncores + core))")
				done
				local cm; cm=$(mask "${cr[@]}")
				echo "      <object type=\"Core\" os_index=\"$core\" cpuset=\"$cm\" complete_cpuset=\"$cm\" nodeset=\"$node\" complete_nodeset=\"$node\">"
				for ((t = 0; t < npu; t++)); do
					pu=$((t * ncores + core))
					local m; m=$(mask "$pu-$pu")
					echo "        <object type=\"PU\" os_index=\"$pu\" cpuset=\"$m\" complete_cpuset=\"$m\" nodeset=\"$node\" complete_nodeset=\"$node\"/>"
				done
				echo "      </object>"
			done
			if [ "${UNDER_MACHINE:-0}" != 1 ]; then
				local b
				for b in ${1:-}; do
					case $b in nic:*) nic "${b#nic:}" "      " ;; *) gpu "$b" "      " ;; esac
				done
				shift || true
			fi
			echo "    </object>"
		done
		if [ "${UNDER_MACHINE:-0}" = 1 ]; then
			for b in "$@"; do gpu "$b" "    "; done
		fi
		echo "  </object>"
		echo "</topology>"
	} > "$file"
}

# Dell PowerEdge C4140-like: 2 x 20 cores, 4 V100 (2 per socket), a NIC.
topo c4140.xml 2 20 1 "0000:3b:00.0 0000:5e:00.0 nic:0000:5f:00.0" "0000:86:00.0 0000:af:00.0"
# DGX-1-like: 2 x 20 cores x 2 threads, 8 GPUs (4 per socket).
topo dgx1.xml 2 20 2 "0000:06:00.0 0000:07:00.0 0000:0a:00.0 0000:0b:00.0" \
	"0000:85:00.0 0000:86:00.0 0000:89:00.0 0000:8a:00.0"
# CPU-only, 2 x 4 cores.
topo cpu-only.xml 2 4 1 "" ""
# GPUs hang directly under a 2-package Machine (as on cloud VMs), 2 x 4 cores.
# One-socket machines are real captures: tests/topo/real.
UNDER_MACHINE=1 topo gpus-under-machine.xml 2 4 1 "0000:04:00.0" "0000:84:00.0"
# This test machine: 2 packages x 1 PU (CPUs 0 and 1), 2 GPUs each.
topo two-cpu-4gpu.xml 2 1 1 "0000:3b:00.0 0000:5e:00.0" "0000:86:00.0 0000:af:00.0"
