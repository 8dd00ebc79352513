#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# upstream-check.sh: make upstream's series, made and proved. Writes the
# kernel series (scripts/upstream.py) into $RSIM_OUT/upstream/kernel/,
# runs checkpatch --strict on every patch (from the kernel source, as a
# maintainer runs it), applies the series to a copy of Debian's 7.3
# source (hard links: the cached source is not touched) and builds the
# driver in that tree, CONFIG_RDMA_SIM=m, W=1 and sparse, on the UML
# debug kernel's configuration. Any checkpatch finding, a patch that does
# not apply or a warning fails. Uses lib.sh's RSIM_OUT and lib-kernel.sh's
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

stage "applied to linux-source-7.3 (a copy of hard links)"
rm -rf "$out/linux" "$out/obj"
cp -al "$RSIM_KSRC" "$out/linux"
for p in "$out"/kernel/*.patch; do
	# patch(1) writes each file anew: the cached source keeps its inodes
	patch -s -p1 -d "$out/linux" <"$p" || die "${p##*/} does not apply"
done

stage "built in-tree: CONFIG_RDMA_SIM=m, W=1, sparse"
mkdir -p "$out/obj"
cp "$RSIM_KBUILD/.config" "$out/obj/.config"
"$out/linux/scripts/config" --file "$out/obj/.config" -m RDMA_SIM
make -s -C "$out/linux" ARCH=um O="$out/obj" olddefconfig
grep -qx CONFIG_RDMA_SIM=m "$out/obj/.config" ||
	die "CONFIG_RDMA_SIM=m did not survive olddefconfig"
make -s -C "$out/linux" ARCH=um O="$out/obj" -j"$(nproc)" modules_prepare \
	>"$out/prepare.log" 2>&1 || { tail -20 "$out/prepare.log"; die "modules_prepare failed"; }
if ! make -C "$out/linux" ARCH=um O="$out/obj" -j"$(nproc)" W=1 C=1 \
	CHECK="$(rsim_sparse)" drivers/infiniband/sw/rdmasim/ \
	>"$out/build.log" 2>&1; then
	tail -30 "$out/build.log"
	die "the driver does not build in-tree"
fi
if grep -E 'warning:|error:' "$out/build.log"; then
	die "the in-tree build warns"
fi
n=$(find "$out/kernel" -name "*.patch" | wc -l)
stage "upstream series: $n patches, checkpatch clean, builds in-tree ($out/kernel)"
