# SPDX-License-Identifier: GPL-2.0-only
# shellcheck shell=bash
# rdmasim: the outside suites' boots, for scripts/peers.sh (make peers)
# and make check's subset. Sourced after lib.sh, lib-kernel.sh and
# lib-boots.sh; needs what rsim_uml_ready exports (RSIM_MODROOT,
# RSIM_KVER, RSIM_MODDIR).
#
#   rsim_peers_prepare dir blktests	the modules tree and the patched
#					blktests copy in dir
#   rsim_peers_kselftest dir ksrc	the kernel's selftests/rdma from
#					ksrc, patched and installed in dir
#   rsim_peers_boot dev dir VAR=value...	one boot, the suites on dev
#					(rdmasim, siw or rxe); its files in
#					dir/dev/, console.log among them

# the unmodified blktests tree tests and CI use; BLKTESTS=<your clone>
# shellcheck disable=SC2034 # for the scripts that source this one
RSIM_BLKTESTS=${BLKTESTS:-$RSIM_TOP/../shared/peers/blktests-a608cb5}

# rsim_peers_prepare <dir> <blktests>: in <dir>, the kernel's modules and
# rdmasim.ko in one tree that the guest bind-mounts on /lib/modules (the
# suites modprobe by name; hard links where the cache and out/ share a file
# system), and a copy of <blktests> with scripts/peers/blktests-*.patch
# applied and its helpers built on the host (the guest runs the host's
# binaries). Sets RSIM_PEERS_DIR.
rsim_peers_prepare() {
	local dir=$1 blktests=$2 mods p bt
	[ -x "$blktests/check" ] ||
		die "BLKTESTS=$blktests: not a blktests tree (no ./check)"
	RSIM_PEERS_DIR=$dir
	rm -rf "$dir"
	mkdir -p "$dir/modules/lib/modules"
	stage "modules for the suites: $dir/modules"
	mods=$dir/modules/lib/modules/$RSIM_KVER
	cp -al "$RSIM_MODROOT/lib/modules/$RSIM_KVER" "$mods" 2>/dev/null ||
		cp -a "$RSIM_MODROOT/lib/modules/$RSIM_KVER" "$mods"
	rm -f "$mods/build" "$mods/source"
	# where it will be in the tree (blktests' _have_module looks under
	# kernel/ only)
	mkdir -p "$mods/kernel/drivers/infiniband/sw/rdmasim"
	cp "$RSIM_MODDIR/drivers/infiniband/sw/rdmasim/rdmasim.ko" \
		"$mods/kernel/drivers/infiniband/sw/rdmasim/"
	depmod -b "$dir/modules" "$RSIM_KVER"
	stage "blktests: $(realpath "$blktests") + scripts/peers/blktests-*.patch"
	bt=$dir/blktests-tree
	cp -a "$blktests" "$bt"
	for p in "$RSIM_TOP"/scripts/peers/blktests-*.patch; do
		patch -s -p1 -d "$bt" <"$p" || die "$p does not apply to $blktests"
	done
	make -C "$bt" -j"$(nproc)" >"$dir/blktests-build.log" 2>&1 ||
		die "building blktests' helpers failed (log: $dir/blktests-build.log)"
}

# rsim_peers_kselftest <dir> <ksrc>: tools/testing/selftests/rdma of the
# kernel source in use, with scripts/peers/kselftest-*.patch applied (the
# link type and module made variables), installed in <dir>/kselftest as
# kselftest installs a collection (make TARGETS=rdma install: the
# collection, run_kselftest.sh and its runner, kselftest-list.txt), from a
# copy of the few files that install reads
rsim_peers_kselftest() {
	local dir=$1 ksrc=$2 p st=tools/testing/selftests f
	rm -rf "$dir/kselftest-src" "$dir/kselftest"
	mkdir -p "$dir/kselftest-src/$st" "$dir/kselftest-src/scripts" "$dir/kselftest-src/tools"
	stage "kernel selftests: $ksrc/$st/rdma + scripts/peers/kselftest-*.patch"
	for f in Makefile lib.mk kselftest rdma run_kselftest.sh kselftest_install.sh; do
		cp -a "$ksrc/$st/$f" "$dir/kselftest-src/$st/"
	done
	cp -a "$ksrc/tools/scripts" "$dir/kselftest-src/tools/"
	cp "$ksrc/scripts/subarch.include" "$dir/kselftest-src/scripts/"
	for p in "$RSIM_TOP"/scripts/peers/kselftest-*.patch; do
		patch -s -p1 -d "$dir/kselftest-src" <"$p" ||
			die "$p does not apply to $ksrc"
	done
	make -C "$dir/kselftest-src/$st" TARGETS=rdma INSTALL_PATH="$dir/kselftest" \
		install >"$dir/kselftest-install.log" 2>&1 ||
		die "installing the rdma selftests failed (log: $dir/kselftest-install.log)"
}

# rsim_peers_boot <dev> <suites> <blktests tests> <nvme img size>
# <blkdev types> [VAR=value...]: one boot (rsim_boot) of the suites
# (comma-separated) on <dev>; lists of tests and of NVMET_BLKDEV_TYPES
# take spaces or commas
rsim_peers_boot() {
	local dev=$1 suites=$2 tests=$3 size=$4 bd=$5 dir=$RSIM_PEERS_DIR/$1
	shift 5
	mkdir -p "$dir"
	# rdmasim.num_devices=0 (read by modprobe from the command line, as
	# an "options" line in /etc/modprobe.d would be): RoCE-mode devices
	# only, as with siw and rxe; blktests' srp group takes every RDMA
	# port for one with a netdev (PEERS_RDMASIM_IB_DEVICES=1: one
	# InfiniBand-mode device as well, the srp finding of ulps.rst)
	rsim_boot peers "$dir/console.log" RSIM_UML_MEM=4G \
		RSIM_UML_ARGS="rdmasim.num_devices=${PEERS_RDMASIM_IB_DEVICES:-0} RSIM_PEERS=0 RSIM_RDMASIM=0 RSIM_PEER_DEV=$dev \
RSIM_PEER_OUT=$dir RSIM_PEER_MODULES=$RSIM_PEERS_DIR/modules \
RSIM_PEER_SUITES=${suites// /,} RSIM_BLKTESTS=$RSIM_PEERS_DIR/blktests-tree \
RSIM_BLKTESTS_RUN=${tests// /,} RSIM_NVME_IMG_SIZE=$size \
RSIM_BLKTESTS_ROUNDS=${PEERS_BLKTESTS_ROUNDS:-1} \
RSIM_KSELFTEST=$RSIM_PEERS_DIR/kselftest${PEERS_RDMA_CORE_TESTS:+ RSIM_RDMA_CORE_TESTS=${PEERS_RDMA_CORE_TESTS// /,}} \
RSIM_NVMET_BLKDEV_TYPES=${bd// /,}" "$@"
}
