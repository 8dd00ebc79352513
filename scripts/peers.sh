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
#   kselftest  the kernel's tools/testing/selftests/rdma from the kernel
#              source in use, with scripts/peers/kselftest-*.patch applied
#              (the link type a variable), installed and run as kselftest
#              runs them; scripts/peers/kselftest-rdma.notrun names those
#              not run, and why
#   rdma-core  rdma-core's own tests (tests/, pyverbs; rdma-core 65 as
#              make check builds it) on a device on a veth end, so that the
#              rdma_cm and Ethernet-only cases run
#   perftest   perftest's programs through its run_perftest_loopback
#              (perftest 25.01 has no --data_validation)
# and, as a device type of its own ("loop"), the nvme group over NVMe's
# loop transport: the same tests with no RDMA device at all, the floor
# above which the table's profile measures each device's own time
# and the table of scripts/peers-table.py: test x device, pass / fail /
# not run with the reason, seconds, each suite's wall time, and every
# kernel report with the test that caused it (out/peers.txt, .json, .svg).
#
#   make peers                      everything (see README for its time)
#   BLKTESTS=<dir> make peers       your own blktests clone (unmodified)
#   PEERS_DEVS="rdmasim siw"        some device types only (rdmasim siw
#                                   rxe loop)
#   PEERS_BLKTESTS="nvme/010 srp"   some tests or groups only
#   PEERS_SUITES=kselftest          some suites only (blktests kselftest
#                                   rdma-core perftest)
#   PEERS_RDMA_CORE_TESTS="*_mr.*"  some of rdma-core's tests (fnmatch
#                                   patterns on their ids)
#   PEERS_BLKTESTS_ROUNDS=5         blktests 5 times in a row in each boot
#                                   (the table: results that differ)
#   PEERS_RDMASIM_IB_DEVICES=1      an InfiniBand-mode rdmasim device too
#                                   (rdmasim.num_devices; default 0)
#
# Nothing is fetched: blktests comes from $BLKTESTS (default: the
# unmodified tree in ../shared/peers/). Exits non-zero when a suite's
# boot did not finish, or when the rdmasim boot's log has a kernel report
# or a failed check of its own; a test that fails on siw or rxe is a
# result (the table says why), not a failure of make peers.
#
# Uses lib.sh's RSIM_TOP, RSIM_OUT, stage, die; lib-kernel.sh's
# rsim_uml_ready; lib-boots.sh's rsim_boots_wait; lib-peers.sh.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-kernel.sh"
. "$(dirname "$0")/lib-boots.sh"
. "$(dirname "$0")/lib-peers.sh"

PEERS_DEVS=${PEERS_DEVS:-rdmasim siw rxe loop}
PEERS_BLKTESTS=${PEERS_BLKTESTS:-nvme srp}
PEERS_SUITES=${PEERS_SUITES:-blktests kselftest rdma-core perftest}
# NVMe namespaces of 350 MiB, the least the nvme group asks for
# (nvme/012): files, and loop devices over files, in the guest's results
# file system (guest/peers.sh)
PEERS_NVME_IMG_SIZE=${PEERS_NVME_IMG_SIZE:-350m}
PEERS_OUT=${PEERS_OUT:-$RSIM_OUT/peers}

for d in $PEERS_DEVS; do
	case $d in rdmasim | siw | rxe | loop) ;; *) die "PEERS_DEVS: $d is not rdmasim, siw, rxe or loop" ;; esac
done
for s in $PEERS_SUITES; do
	case $s in
	blktests | kselftest | rdma-core | perftest) ;;
	*) die "PEERS_SUITES: $s is not blktests, kselftest, rdma-core or perftest" ;;
	esac
done

t0=$(date +%s)
# rdma-core's tests and perftest run rdma-core 65's build (and rdmasim's
# provider): rsim_uml_ready builds them where one of them is asked for
tools=0
case " $PEERS_SUITES " in *" rdma-core "* | *" perftest "*) tools=1 ;; esac
RSIM_UML_TOOLS=$tools rsim_uml_ready debug uml-7.3

rsim_peers_prepare "$PEERS_OUT" "$RSIM_BLKTESTS"
case " $PEERS_SUITES " in
*" kselftest "*) rsim_peers_kselftest "$PEERS_OUT" "$RSIM_KSRC" ;;
esac

# loop runs blktests' nvme tests only (NVMe's loop transport needs no
# RDMA device; nothing else does): those asked for, if blktests is
loop_tests=''
for t in $PEERS_BLKTESTS; do
	case $t in nvme | nvme/*) loop_tests="$loop_tests $t" ;; esac
done
loop_tests=${loop_tests# }
case " $PEERS_SUITES " in *" blktests "*) ;; *) loop_tests='' ;; esac
devs=''
for d in $PEERS_DEVS; do
	[ "$d" != loop ] || [ -n "$loop_tests" ] || continue
	devs="$devs $d"
done
devs=${devs# }

# peer_boot <dev>: one boot, the suites on <dev>
peer_boot() {
	local suites=$PEERS_SUITES tests=$PEERS_BLKTESTS
	[ "$1" != loop ] || suites=blktests tests=$loop_tests
	rsim_peers_boot "$1" "$suites" "$tests" \
		"$PEERS_NVME_IMG_SIZE" "device file" \
		RSIM_UML_TIMEOUT="${PEERS_TIMEOUT:-14400}"
}

# two boots at a time: each UML kernel runs on one CPU
# shellcheck disable=SC2086 # one word per device
set -- $devs
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
for d in $devs; do
	log=$PEERS_OUT/$d/console.log
	grep -q RSIM-DONE "$log" 2>/dev/null || {
		echo "peers: the $d boot did not finish (log: $log)" >&2
		fail=1
	}
done
# shellcheck disable=SC2086 # one word per device
python3 "$RSIM_TOP/scripts/peers-table.py" --out "$PEERS_OUT" \
	--txt "$RSIM_OUT/peers.txt" --json "$RSIM_OUT/peers.json" \
	--svg "$RSIM_OUT/peers.svg" $devs || fail=1
cat "$RSIM_OUT/peers.txt"
# rdmasim's own boot is judged as make check judges its boots
case " $PEERS_DEVS " in
*" rdmasim "*)
	# less the reports every device shows, written up as findings
	rsim_judge "$PEERS_OUT/rdmasim/console.log" -- \
		--findings "$RSIM_TOP/scripts/peers/known-reports.findings" \
		--findings-may-show >"$PEERS_OUT/rdmasim/judge.txt" 2>&1 || fail=1
	# a report repeated thousands of times is one line of the table
	tail -25 "$PEERS_OUT/rdmasim/judge.txt"
	;;
esac
stage "make peers: $(($(date +%s) - t0)) s (table: $RSIM_OUT/peers.txt)"
[ $fail = 0 ] || die "make peers failed"
