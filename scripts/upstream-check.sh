#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# upstream-check.sh: make upstream's series, made and proved. Writes the
# kernel series (scripts/upstream.py) into $RSIM_OUT/upstream/kernel/,
# runs checkpatch --strict on every patch (from the kernel source, as a
# maintainer runs it), applies the series patch by patch to a copy of
# Debian's 7.3 source (hard links: the cached source is not touched) and
# builds after each what it has brought so far (make headers for the uAPI;
# the driver and its KUnit suites in-tree, CONFIG_RDMA_SIM=m and
# CONFIG_RDMA_SIM_KUNIT_TEST=m, W=1 and sparse) on the UML debug
# kernel's configuration: bisectable. Any checkpatch finding, a patch
# that does not apply, an error or a warning fails. Uses lib.sh's RSIM_OUT and lib-kernel.sh's
# rsim_fetch_source and rsim_build_uml.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-kernel.sh"

"$RSIM_TOP/scripts/setup-host.sh"
rsim_fetch_source 7.3
rsim_build_uml debug
out=$RSIM_OUT/upstream
mkdir -p "$out"

stage "the series, made from this tree"
python3 "$RSIM_TOP/scripts/upstream.py" --ksrc "$RSIM_KSRC" --out "$out"

stage "checkpatch --strict, patch by patch"
fail=0
for p in "$out"/kernel/*.patch; do
	if ! (cd "$RSIM_KSRC" && scripts/checkpatch.pl --strict --terse \
		--show-types "$p") >"$p.checkpatch" 2>&1; then
		echo "${p##*/}:"
		grep -v '^total: ' "$p.checkpatch" | head -40
		fail=1
	fi
done
[ $fail = 0 ] || die "checkpatch found problems in the series"

stage "applied to linux-source-7.3 (a copy of hard links), each patch built"
rm -rf "$out/linux" "$out/obj"
cp -al "$RSIM_KSRC" "$out/linux"
mkdir -p "$out/obj"
cp "$RSIM_KBUILD/.config" "$out/obj/.config"
: >"$out/build.log"
kmake() {
	make -C "$out/linux" ARCH=um O="$out/obj" -j"$(nproc)" "$@"
}
prepared=0
for p in "$out"/kernel/*.patch; do
	# patch(1) writes each file anew: the cached source keeps its inodes
	patch -s -p1 -d "$out/linux" <"$p" || die "${p##*/} does not apply"
	"$out/linux/scripts/config" --file "$out/obj/.config" \
		-m RDMA_SIM -m RDMA_SIM_KUNIT_TEST
	kmake -s olddefconfig
	if [ $prepared = 0 ]; then
		kmake -s modules_prepare >"$out/prepare.log" 2>&1 ||
			{ tail -20 "$out/prepare.log"; die "modules_prepare failed"; }
		prepared=1
	fi
	echo "== ${p##*/}" >>"$out/build.log"
	# a uAPI header installs and passes the kernel's header checks
	if grep -q '^+++ b/include/uapi/' "$p"; then
		kmake headers >>"$out/build.log" 2>&1 ||
			{ tail -20 "$out/build.log"; die "${p##*/}: make headers failed"; }
	fi
	# the driver, as far as the series has come, W=1 and sparse
	if [ -d "$out/linux/drivers/infiniband/sw/rdmasim" ]; then
		kmake W=1 C=1 CHECK="$(rsim_sparse)" \
			drivers/infiniband/sw/rdmasim/ >>"$out/build.log" 2>&1 ||
			{ tail -30 "$out/build.log"; die "${p##*/}: the driver does not build"; }
	fi
done
if grep -E 'warning:|error:' "$out/build.log"; then
	die "the in-tree build warns"
fi
for opt in RDMA_SIM RDMA_SIM_KUNIT_TEST; do
	grep -qx "CONFIG_$opt=m" "$out/obj/.config" ||
		die "CONFIG_$opt=m did not survive olddefconfig"
done
grep -q "rdmasim_kunit.o" "$out/build.log" ||
	die "the KUnit suites were not built"
n=$(find "$out/kernel" -name "*.patch" | wc -l)
stage "upstream series: $n patches, checkpatch clean, each builds in-tree ($out/kernel)"
