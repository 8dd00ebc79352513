#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# peers.sh: the outside world's test suites on rdmasim, side by side with
# siw and rxe (make peers). One boot of the debug UML kernel per device
# type (rdmasim in RoCE mode, siw, rxe; at most two at once, each on one
# CPU), each running, as their users run them:
#   blktests   the nvme group over NVMe/RDMA (NVMET_TRTYPES=rdma, both
#              NVMET_BLKDEV_TYPES, IPv6 link-local) and the srp group, from
#              a copy of $BLKTESTS with scripts/peers/blktests-*.patch
#              applied (USE_RDMASIM=1 next to USE_RXE=1)
# and the table of scripts/peers-table.py: test x device, pass / fail /
# not run with the reason, seconds, each suite's wall time, and every
# kernel report with the test that caused it (out/peers.txt, .json, .svg).
#
#   make peers                      everything (see README for its time)
#   BLKTESTS=<dir> make peers       your own blktests clone (unmodified)
#   PEERS_DEVS="rdmasim siw"        some device types only
#   PEERS_BLKTESTS="nvme/010 srp"   some tests or groups only
#   PEERS_SUITES=blktests           some suites only
#
# Nothing is fetched: blktests comes from $BLKTESTS (default: the
# unmodified tree in ../shared/peers/). Exits non-zero when a suite's
# boot did not finish, or when the rdmasim boot's log has a kernel report
# or a failed check of its own; a test that fails on siw or rxe is a
# result (the table says why), not a failure of make peers.
#
# Uses lib.sh's RSIM_TOP, RSIM_OUT, stage, die; lib-kernel.sh's
# rsim_uml_ready; lib-boots.sh's rsim_boot and rsim_boots_wait.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-kernel.sh"
. "$(dirname "$0")/lib-boots.sh"

BLKTESTS=${BLKTESTS:-$RSIM_TOP/../shared/peers/blktests-a608cb5}
PEERS_DEVS=${PEERS_DEVS:-rdmasim siw rxe}
PEERS_BLKTESTS=${PEERS_BLKTESTS:-nvme srp}
PEERS_SUITES=${PEERS_SUITES:-blktests}
# NVMe namespaces of 350 MiB, the least the nvme group asks for
# (nvme/012): files and loop devices on the guest's tmpfs
PEERS_NVME_IMG_SIZE=${PEERS_NVME_IMG_SIZE:-350m}
PEERS_OUT=${PEERS_OUT:-$RSIM_OUT/peers}

[ -x "$BLKTESTS/check" ] ||
	die "BLKTESTS=$BLKTESTS: not a blktests tree (no ./check)"
for d in $PEERS_DEVS; do
	case $d in rdmasim | siw | rxe) ;; *) die "PEERS_DEVS: $d is not rdmasim, siw or rxe" ;; esac
done

t0=$(date +%s)
# the suites so far need no project tool nor rdma-core 65
RSIM_UML_TOOLS=0 rsim_uml_ready debug uml-7.3

rm -rf "$PEERS_OUT"
mkdir -p "$PEERS_OUT"

# The kernel's modules and rdmasim.ko in one tree that the guest
# bind-mounts on /lib/modules: the suites modprobe by name. Hard links
# where the cache and out/ share a file system.
stage "modules for the suites: $PEERS_OUT/modules"
mods=$PEERS_OUT/modules/lib/modules/$RSIM_KVER
mkdir -p "$PEERS_OUT/modules/lib/modules"
cp -al "$RSIM_MODROOT/lib/modules/$RSIM_KVER" "$mods" 2>/dev/null ||
	cp -a "$RSIM_MODROOT/lib/modules/$RSIM_KVER" "$mods"
rm -f "$mods/build" "$mods/source"
# where it will be in the tree (blktests' _have_module looks under
# kernel/ only)
mkdir -p "$mods/kernel/drivers/infiniband/sw/rdmasim"
cp "$RSIM_MODDIR/drivers/infiniband/sw/rdmasim/rdmasim.ko" \
	"$mods/kernel/drivers/infiniband/sw/rdmasim/"
depmod -b "$PEERS_OUT/modules" "$RSIM_KVER"

# blktests: a copy with the project's patch, its helpers built on the
# host (the guest runs the host's binaries)
stage "blktests: $(realpath "$BLKTESTS") + scripts/peers/blktests-*.patch"
bt=$PEERS_OUT/blktests-tree
cp -a "$BLKTESTS" "$bt"
for p in "$RSIM_TOP"/scripts/peers/blktests-*.patch; do
	patch -s -p1 -d "$bt" <"$p" || die "$p does not apply to $BLKTESTS"
done
make -C "$bt" -j"$(nproc)" >"$PEERS_OUT/blktests-build.log" 2>&1 ||
	die "building blktests' helpers failed (log: $PEERS_OUT/blktests-build.log)"

# peer_boot <dev>: one boot, the suites on <dev>
peer_boot() {
	local dev=$1 dir=$PEERS_OUT/$1
	mkdir -p "$dir"
	rsim_boot peers "$dir/console.log" RSIM_UML_MEM=4G \
		RSIM_UML_TIMEOUT="${PEERS_TIMEOUT:-7200}" \
		RSIM_UML_ARGS="RSIM_PEERS=0 RSIM_RDMASIM=0 RSIM_PEER_DEV=$dev \
RSIM_PEER_OUT=$dir RSIM_PEER_MODULES=$PEERS_OUT/modules \
RSIM_PEER_SUITES=${PEERS_SUITES// /,} RSIM_BLKTESTS=$bt \
RSIM_BLKTESTS_RUN=${PEERS_BLKTESTS// /,} RSIM_NVME_IMG_SIZE=$PEERS_NVME_IMG_SIZE"
}

# two boots at a time: each UML kernel runs on one CPU
# shellcheck disable=SC2086 # one word per device
set -- $PEERS_DEVS
while [ $# -gt 0 ]; do
	peer_boot "$1"
	shift
	if [ $# -gt 0 ] && [ "$(nproc)" -ge 2 ]; then
		peer_boot "$1"
		shift
	fi
	rsim_boots_wait || true
	RSIM_BOOTS='' RSIM_BOOT_LOGS=''
done

fail=0
for d in $PEERS_DEVS; do
	log=$PEERS_OUT/$d/console.log
	grep -q RSIM-DONE "$log" 2>/dev/null || {
		echo "peers: the $d boot did not finish (log: $log)" >&2
		fail=1
	}
done
# shellcheck disable=SC2086 # one word per device
python3 "$RSIM_TOP/scripts/peers-table.py" --out "$PEERS_OUT" \
	--txt "$RSIM_OUT/peers.txt" --json "$RSIM_OUT/peers.json" \
	--svg "$RSIM_OUT/peers.svg" $PEERS_DEVS || fail=1
cat "$RSIM_OUT/peers.txt"
# rdmasim's own boot is judged as make check judges its boots
case " $PEERS_DEVS " in
*" rdmasim "*)
	rsim_judge "$PEERS_OUT/rdmasim/console.log" -- >"$PEERS_OUT/rdmasim/judge.txt" 2>&1 ||
		fail=1
	# a report repeated thousands of times is one line of the table
	tail -25 "$PEERS_OUT/rdmasim/judge.txt"
	;;
esac
stage "make peers: $(($(date +%s) - t0)) s (table: $RSIM_OUT/peers.txt)"
[ $fail = 0 ] || die "make peers failed"
