#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# conformance-host.sh DEVICE [module parameters...]
# On a test host: build rdma_conformance.ko against the running kernel's
# headers, load it with target=DEVICE (the name in "rdma dev", or "all"),
# print the rule x device table and write it to out/conformance.txt
# and out/conformance.json. The device stays in use only while the
# suites run; the module is unloaded at the end. Run as root.
#
#   scripts/conformance-host.sh irdma0
#   scripts/conformance-host.sh mlx5_0 limit_budget=100000
#   KDIR=/path/to/build scripts/conformance-host.sh rxe0
#   RSIM_CONF_KO=<built .ko> scripts/conformance-host.sh all	(built elsewhere)
#
# Module parameters: hazards=<dev> also runs the checks that hang some
# devices (page_size 0), print_warns=1 prints WARN backtraces instead of
# counting them, limit_budget=<n> allows longer object-limit checks,
# peer=<dev> puts the requesters of the connections on another InfiniBand
# port of the same fabric (e.g. the second port's device of a two-HCA host):
#
#   scripts/conformance-host.sh mlx5_1 peer=mlx5_0
# Uses lib.sh's RSIM_TOP and RSIM_OUT, and lib-kernel.sh's rsim_build_modules
# (RSIM_MODDIR).
set -euo pipefail
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-kernel.sh"

dev=${1:?usage: scripts/conformance-host.sh DEVICE [module parameters...]}
shift
kver=$(uname -r)
kdir=${KDIR:-/lib/modules/$kver/build}
[ -f "$kdir/Makefile" ] ||
	die "no kernel build tree at $kdir: install the headers of $kver (Debian: linux-headers-$kver) or set KDIR="
if ! grep -qE '^CONFIG_KUNIT=(y|m)' "$kdir/.config" 2>/dev/null; then
	cat >&2 <<MSG
rdmasim: the kernel in $kdir was built without KUnit (CONFIG_KUNIT is not set), as
Debian's and most distribution kernels are; the conformance suites are
KUnit suites and cannot load there. To run them on this host, boot a
kernel of the same tree configured with

    scripts/config --module KUNIT     # in the kernel source, then rebuild

(any kernel from 6.8 on; CONFIG_KUNIT_DEBUGFS keeps the results in
/sys/kernel/debug/kunit/). Without a host kernel, "make check" runs the
same suites on rdmasim0, rxe0 and siw0 under a UML kernel it builds.
MSG
	exit 1
fi
[ "$(id -u)" -eq 0 ] || die "loading modules needs root"

case ${ARCH:-$(uname -m)} in
x86_64 | i?86) arch=x86 ;;
aarch64) arch=arm64 ;;
ppc64*) arch=powerpc ;;
s390x) arch=s390 ;;
riscv64) arch=riscv ;;
*) arch=$(uname -m) ;;
esac
mkdir -p "$RSIM_OUT"
if [ -n "${RSIM_CONF_KO:-}" ]; then
	ko=$RSIM_CONF_KO	# built elsewhere for this kernel
else
	stage "building rdma_conformance.ko against $kdir"
	RSIM_WARN_OK=1 rsim_build_modules "$kdir" "$arch" "host-$kver"
	ko=$RSIM_MODDIR/kunit/conformance/rdma_conformance.ko
	# Kbuild leaves kunit/ out where KUnit lacks the 6.8 cleanup actions
	[ -f "$ko" ] ||
		die "rdma_conformance.ko was not built: KUnit older than 6.8 (no kunit_add_action)? (log: $RSIM_MODDIR.log)"
fi

# what the module links against, loaded the way the kernel has them
for m in kunit ib_core ib_cm iw_cm rdma_cm; do
	modprobe -q "$m" 2>/dev/null || true
done
rdma dev show "$dev" >/dev/null 2>&1 || [ "$dev" = all ] ||
	die "no RDMA device $dev (rdma dev lists them)"

log=$RSIM_OUT/conformance-$kver.log
stage "running the conformance suites on $dev (a few minutes)"
echo "RSIM-CONF-BEGIN" >/dev/kmsg
rc=0
insmod "$ko" target="$dev" "$@" || rc=$?
echo "RSIM-CONF-END" >/dev/kmsg
# The results: from debugfs while the module is loaded (the kernel log
# may have overwritten the beginning of a long run), else the log.
kunitfs=/sys/kernel/debug/kunit
[ -d "$kunitfs" ] || mount -t debugfs debugfs /sys/kernel/debug 2>/dev/null || true
if ls -d "$kunitfs"/rdma_conformance_* >/dev/null 2>&1; then
	for a in mr map frwr limits; do
		cat "$kunitfs"/rdma_conformance_"$a".*/results
	done >"$log"
else
	dmesg >"$log"
fi
lsmod | grep -q '^rdma_conformance ' && rmmod rdma_conformance
[ $rc = 0 ] || die "insmod failed ($rc); see $log"
python3 "$RSIM_TOP/scripts/conformance-table.py" "$log" --out "$RSIM_OUT" \
	--known "$RSIM_TOP/kunit/conformance/known-divergences"
stage "table in $RSIM_OUT/conformance.txt; the kernel log in $log"
