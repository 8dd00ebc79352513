#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# upstream-check.sh: make upstream's series, made and proved. Writes the
# kernel series (scripts/upstream.py) into $RSIM_OUT/upstream/kernel/,
# runs checkpatch --strict on every patch (from the kernel source, as a
# maintainer runs it), checks that each fits a mailing list, applies the
# series patch by patch to a copy of Debian's 7.3 source (hard links: the
# cached source is not touched) and builds after each what it has brought
# so far (make headers for the uAPI; the driver and its KUnit suites
# in-tree once the driver is wired, CONFIG_RDMA_SIM=m and
# CONFIG_RDMA_SIM_KUNIT_TEST=m, W=1 and sparse; before, a patch may only
# add the driver's files) on the UML debug kernel's configuration:
# bisectable. Any checkpatch finding (but FILE_PATH_CHANGES proved false),
# a patch that does not apply, an error or a warning fails. Uses lib.sh's RSIM_OUT and lib-kernel.sh's
# rsim_fetch_source and rsim_build_uml.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-kernel.sh"
. "$(dirname "$0")/lib-boots.sh"

"$RSIM_TOP/scripts/setup-host.sh"
rsim_fetch_source 7.3
rsim_build_uml debug
out=$RSIM_OUT/upstream
mkdir -p "$out"

# rdma-core's source, as make check's build fetched it (cached)
"$RSIM_TOP/scripts/build-rdma-core.sh" >"$out/rdma-core-fetch.log" 2>&1 ||
	{ tail -20 "$out/rdma-core-fetch.log"; die "rdma-core's source is missing"; }
rsrc=$(find "$RSIM_CACHE/rdma-core" -mindepth 2 -maxdepth 2 -name src | sort | tail -1)

stage "the series, made from this tree"
python3 "$RSIM_TOP/scripts/upstream.py" --ksrc "$RSIM_KSRC" --out "$out" \
	--rdma-core "$rsrc"

# a series' patches (kernel, rdma-core), without the cover letter
series() {
	find "$out/${1:-kernel}" -name '[0-9][0-9][0-9][0-9]-*.patch' ! -name '0000-*' |
		sort
}

stage "checkpatch --strict, patch by patch; each patch fits a mailing list"
# One finding is let through, and then proved false: FILE_PATH_CHANGES
# ("does MAINTAINERS need updating?"), which checkpatch raises for every
# patch that adds files without touching MAINTAINERS, on a patch whose
# new files the rdmasim entry covers already (get_maintainer.pl, below,
# once the patch is applied). The driver's files come in several patches
# into a directory the first of them lists.
fail=0
: >"$out/maintainers-check"
for p in $(series); do
	(cd "$RSIM_KSRC" && scripts/checkpatch.pl --strict --terse \
		--show-types "$p") >"$p.checkpatch" 2>&1 || true
	if grep -v -e '^total: ' -e ':FILE_PATH_CHANGES:' "$p.checkpatch" | grep -q .; then
		echo "${p##*/}:"
		grep -v '^total: ' "$p.checkpatch" | head -40
		fail=1
	elif grep -q ':FILE_PATH_CHANGES:' "$p.checkpatch"; then
		echo "${p##*/}" >>"$out/maintainers-check"
	fi
	# vger.kernel.org refuses a message over 100,000 bytes
	if [ "$(stat -c %s "$p")" -gt 100000 ]; then
		echo "${p##*/}: $(stat -c %s "$p") bytes, more than a list takes"
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
for p in $(series); do
	# patch(1) writes each file anew: the cached source keeps its inodes
	patch -s -p1 -d "$out/linux" <"$p" || die "${p##*/} does not apply"
	# checkpatch's FILE_PATH_CHANGES, proved false: every file the patch
	# adds has rdmasim's MAINTAINERS entry already
	if grep -qx "${p##*/}" "$out/maintainers-check"; then
		awk '/^diff --git / { f = substr($4, 3) } /^new file mode/ { print f }' \
			"$p" >"$out/new-files"
		[ -s "$out/new-files" ] || die "${p##*/}: FILE_PATH_CHANGES, no new file"
		while read -r f; do
			(cd "$out/linux" && scripts/get_maintainer.pl --no-git \
				--no-rolestats -f "$f") | grep -q "rdmasim developers" ||
				die "${p##*/}: MAINTAINERS does not cover $f"
		done <"$out/new-files"
	fi
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
	# the driver, as far as the series has come, W=1 and sparse, once
	# its Makefile hook is in; before, a patch may only add files under
	# it (and touch MAINTAINERS): what the kernel builds is unchanged
	if grep -q rdmasim "$out/linux/drivers/infiniband/sw/Makefile"; then
		kmake W=1 C=1 CHECK="$(rsim_sparse)" \
			drivers/infiniband/sw/rdmasim/ >>"$out/build.log" 2>&1 ||
			{ tail -30 "$out/build.log"; die "${p##*/}: the driver does not build"; }
	elif sed -n 's|^+++ b/||p' "$p" |
		grep -v -e '^drivers/infiniband/sw/rdmasim/' -e '^MAINTAINERS$' \
			-e '^include/uapi/rdma/' |
		grep -q .; then
		die "${p##*/} changes what the kernel builds before the driver is wired"
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
# The patched kernel, built where the debug kernel was built: a copy of
# its objects, and the series' tree bind-mounted (in a mount namespace of
# this build's own) over the debug kernel's source path, which the
# objects' command lines name, so that only what the series changed is
# built again. Both are kept in the cache, per debug tree, and the
# series' files are written into the tree only when their content
# changed (an unchanged file keeps its time): a second run builds what
# changed since the first. Then booted, in script mode
# (guest/upstream-boot.sh): rdmasim from the kernel's own modules, every
# KUnit suite of the in-tree rdmasim_kunit.ko, the conformance suites on
# an InfiniBand pair and a RoCE-mode device, the rdma-core series'
# pyverbs tests with its library and provider, the series' kselftest,
# and the same tests with the old provider on the new kernel, and with
# the new provider on this tree's driver (the old kernel).
stage "the patched debug kernel: built, modules installed"
ptree=$RSIM_CACHE/upstream/$(basename "$(dirname "$RSIM_KBUILD")")
pl=$ptree/linux
pobj=$ptree/obj
rsim_lock "upstream-${ptree##*/}"
if [ ! -f "$ptree/.complete" ] || [ "$RSIM_KBUILD/linux" -nt "$ptree/.complete" ]; then
	rm -rf "$ptree"
	mkdir -p "$ptree"
	cp -al "$RSIM_KSRC" "$pl"
	cp -a "$RSIM_KBUILD" "$pobj"
	: >"$ptree/touched"
	touch "$ptree/.complete"
fi
# shellcheck disable=SC2046 # one word per patch
sed -n 's|^+++ b/||p' $(series) | sort -u >"$out/touched"
# what an earlier series touched and this one does not: the source's again
comm -23 "$ptree/touched" "$out/touched" | while read -r f; do
	rm -f "$pl/$f"
	[ ! -e "$RSIM_KSRC/$f" ] || ln "$RSIM_KSRC/$f" "$pl/$f"
done
while read -r f; do
	cmp -s "$out/linux/$f" "$pl/$f" && continue
	mkdir -p "$(dirname "$pl/$f")"
	rm -f "$pl/$f"
	cp --preserve=mode "$out/linux/$f" "$pl/$f"
done <"$out/touched"
cp "$out/touched" "$ptree/touched"
"$pl/scripts/config" --file "$pobj/.config" -m RDMA_SIM -m RDMA_SIM_KUNIT_TEST
rm -rf "$out/boot-modroot"
# shellcheck disable=SC2016 # expanded by the inner shell
if ! $SUDO unshare -m sh -c 'mount --bind "$1" "$2" &&
	make -C "$2" ARCH=um O="$3" olddefconfig &&
	make -C "$2" ARCH=um O="$3" -j"$4" &&
	make -C "$2" ARCH=um O="$3" INSTALL_MOD_PATH="$5" modules_install' \
	sh "$pl" "$RSIM_KSRC" "$pobj" "$(nproc)" \
	"$out/boot-modroot" >"$out/boot-build.log" 2>&1; then
	tail -30 "$out/boot-build.log"
	die "the patched kernel does not build"
fi
rsim_unlock
grep -E 'warning:|error:' "$out/boot-build.log" | grep rdmasim &&
	die "the patched kernel's build warns in rdmasim"
echo "$(grep -c '^  CC' "$out/boot-build.log") files compiled"
# the conformance suites' module (device-agnostic: not part of the series,
# whose devices it checks) and this tree's own driver (RDMA_DRIVER_UNKNOWN:
# rdmasim as the kernels before the series have it) built against the
# patched kernel, in the same mount namespace arrangement: the series'
# headers are the ones they see; and this tree's provider, against the
# project's rdma-core (65 as released)
stage "rdma_conformance.ko and this tree's rdmasim.ko, built against the patched kernel"
# shellcheck disable=SC2016 # expanded by the inner shell
$SUDO unshare -m bash -c 'mount --bind "$1" "$2" &&
	. "$3/scripts/lib.sh" && . "$3/scripts/lib-kernel.sh" &&
	rsim_build_modules "$4" um upstream-oot "RSIM_PARTS=conformance driver"' \
	bash "$pl" "$RSIM_KSRC" "$RSIM_TOP" "$pobj" ||
	die "rdma_conformance.ko or rdmasim.ko does not build against the patched kernel"
oot=$RSIM_OUT/build/upstream-oot
confko=$oot/kunit/conformance/rdma_conformance.ko
for f in "$confko" "$oot/drivers/infiniband/sw/rdmasim/rdmasim.ko"; do
	[ -f "$f" ] || die "no $f"
done
(
	# shellcheck disable=SC1091 # the build's
	. "$(dirname "$rsrc")/build/rsim-env.sh"
	make -C "$oot" provider
) >"$oot.provider.log" 2>&1 ||
	{ tail -20 "$oot.provider.log"; die "tools/provider does not build"; }
# rdma-core's series, built by rdma-core's own build as its CI's gcc-12
# jobs build it (-DIOCTL_MODE=both -DENABLE_WERROR=1; no pyverbs, as its
# sparse job, and no man pages), in the cache per series and rdma-core
# source (a series built once is not built again); the boot below runs
# its provider and its pyverbs tests
stage "rdma-core: the series applied to $rsrc, built with -Werror"
key=$(for p in $(series rdma-core); do sed -n '/^--- /,$p' "$p"; done |
	cat - "$rsrc/CMakeLists.txt" | sha256sum | cut -c1-16)
rdir=$RSIM_CACHE/upstream/rdma-core-$key
rsim_lock upstream-rdma-core
if [ -f "$rdir/.complete" ]; then
	echo "built before with the same series: $rdir"
else
	# one series' build kept: the earlier ones go
	rm -rf "$RSIM_CACHE"/upstream/rdma-core-*
	mkdir -p "$rdir"
	cp -al "$rsrc" "$rdir/src"
	for p in $(series rdma-core); do
		# patch(1) writes each file anew: the cached source keeps its inodes
		patch -s -p1 -d "$rdir/src" <"$p" ||
			die "rdma-core: ${p##*/} does not apply"
	done
	mkdir -p "$rdir/build"
	(cd "$rdir/build" &&
		cmake -GNinja -DIOCTL_MODE=both -DENABLE_WERROR=1 -DNO_PYVERBS=1 \
			-DNO_MAN_PAGES=1 "$rdir/src" && ninja -j"$(nproc)") \
		>"$out/rdma-core-build.log" 2>&1 ||
		{ tail -30 "$out/rdma-core-build.log"; die "rdma-core does not build with the series"; }
	ls "$rdir"/build/lib/librdmasim-rdmav*.so >/dev/null ||
		die "rdma-core built no rdmasim provider"
	touch "$rdir/.complete"
fi
rsim_unlock

stage "the patched debug kernel, booted: rdmasim in-tree, its KUnit suites, conformance, pyverbs, kselftest"
RSIM_KBUILD=$pobj RSIM_MODROOT=$out/boot-modroot RSIM_MODDIR=$pobj \
	RSIM_KVER=$RSIM_KVER rsim_boot script "$out/uml-upstream.log" RSIM_UML_ARGS="RSIM_RDMASIM=0 RSIM_PEERS=0 RSIM_SCRIPT=$RSIM_TOP/scripts/guest/upstream-boot.sh RSIM_UPSTREAM_SRC=$out/linux RSIM_CONF_KO=$confko RSIM_UPSTREAM_OOT=$oot RSIM_UPSTREAM_RDMA_CORE=$rdir RSIM_RDMA_CORE_ENV=$(dirname "$rsrc")/build/rsim-env.sh"
rsim_boots_wait || true
rsim_judge "$out/uml-upstream.log" -- --part kunit --part conformance --part pyverbs \
	--part combinations \
	--kunit "$pobj/drivers/infiniband/sw/rdmasim/tests/rdmasim_kunit.ko" \
	--conformance rdmasim0,rdmasim1,rsim_veth2_rdmasim \
	--conformance-module "$confko" --out "$out/conformance" ||
	die "the patched kernel's boot failed (log: $out/uml-upstream.log)"

kn=$(series | wc -l)
rn=$(series rdma-core | wc -l)
stage "upstream series: $kn kernel patches, checkpatch clean (FILE_PATH_CHANGES on $(wc -l <"$out/maintainers-check") proved false), each builds in-tree and fits a list, a cover letter, the last boots (KUnit, conformance, pyverbs, kselftest, old and new library on new and old kernel); $rn rdma-core patches, built with -Werror ($out)"
