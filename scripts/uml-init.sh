#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
#
# rdmasim: init (PID 1) of the UML test kernel. The host's / is the
# read-only root; the kernel command line passes RSIM_TOP, RSIM_MODDIR
# (where the rdmasim modules were built), RSIM_MODROOT,
# RSIM_KVER and RSIM_MODE (check or demo) in the environment.
# Everything goes to the console; scripts/run-uml.sh reads it back.

export PATH=/usr/sbin:/usr/bin:/sbin:/bin
RDRV=$RSIM_MODDIR/drivers/infiniband/sw/rdmasim
PLAT=/sys/bus/platform/drivers/rdmasim
KMEMLEAK=/sys/kernel/debug/kmemleak
n=0
fails=0

mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t debugfs debugfs /sys/kernel/debug
# scratch space; /tmp stays the host's (the repository may live there)
mount -t tmpfs tmpfs /run

say() {
	echo "$*" >/dev/kmsg
}

# check "name" cmd...: one line of the shell selftest's own results
check() {
	local name=$1
	shift
	n=$((n + 1))
	if "$@" >/run/check.out 2>&1; then
		say "RSIM-SELFTEST ok $n $name"
	else
		say "RSIM-SELFTEST not ok $n $name"
		sed 's/^/RSIM-SELFTEST #   /' /run/check.out >/dev/kmsg
		fails=$((fails + 1))
	fi
}

finish() {
	# objects must be older than kmemleak's minimum age to be reported
	if [ -w $KMEMLEAK ]; then
		sleep 6
		echo scan >$KMEMLEAK
		echo scan >$KMEMLEAK
		say "RSIM-KMEMLEAK-BEGIN"
		cat $KMEMLEAK >/dev/console
		say "RSIM-KMEMLEAK-END"
	fi
	say "RSIM-SELFTEST 1..$n"
	say "RSIM-DONE fails=$fails"
	echo o >/proc/sysrq-trigger
	sleep 10
}

say "RSIM-INIT mode=$RSIM_MODE kernel=$(uname -r)"

# kmemleak: forget whatever the kernel leaked while booting
if [ -w $KMEMLEAK ]; then
	echo scan >$KMEMLEAK
	echo clear >$KMEMLEAK
fi

# Peers: rxe over one end of a veth pair and siw over the other, with
# IPv6 link-local addresses only (DAD off, so they are usable at once):
# rdma_cm reaches siw0 through rsim_veth1's link-local address (on lo it
# would bind to whichever device came first).
ip link set lo up
ip link add rsim_veth0 type veth peer name rsim_veth1
for i in rsim_veth0 rsim_veth1; do
	echo 0 >/proc/sys/net/ipv6/conf/$i/accept_dad
	ip link set $i up
done
check "modprobe_rdma_rxe" modprobe -d "$RSIM_MODROOT" -S "$RSIM_KVER" rdma_rxe
check "modprobe_siw" modprobe -d "$RSIM_MODROOT" -S "$RSIM_KVER" siw
check "rxe0_on_veth" rdma link add rxe0 type rxe netdev rsim_veth0
check "siw0_on_veth" rdma link add siw0 type siw netdev rsim_veth1

check "insmod_rdmasim" insmod "$RDRV/rdmasim.ko"
rdma dev >/dev/console
check "rdma_dev_shows_rdmasim0" sh -c 'rdma dev | grep -q "rdmasim0: node_type ca"'
check "rdma_link_shows_port_active" sh -c \
	'rdma link show rdmasim0/1 | grep -q "state ACTIVE physical_state LINK_UP"'

# The conformance suites on every RDMA device (rdmasim0, rxe0, siw0):
# KTAP between two markers, judged and tabulated by conformance-table.py.
# page_size 0 hangs siw (see Documentation/conformance.rst): hazards only
# on the other two. RSIM_CONF_ARGS replaces the module parameters
# (commas for spaces), e.g. RSIM_CONF_ARGS=target=rdmasim0,limit_budget=0.
conformance() {
	local args=${RSIM_CONF_ARGS:-hazards=rdmasim0,rxe0}

	say "RSIM-CONF-BEGIN"
	# shellcheck disable=SC2046 # one word per parameter
	check "insmod_rdma_conformance" \
		insmod "$RSIM_MODDIR/kunit/conformance/rdma_conformance.ko" \
		$(echo "$args" | sed 's/,\([a-z_]*=\)/ \1/g')
	say "RSIM-CONF-END"
	check "rmmod_rdma_conformance" rmmod rdma_conformance
}

# Figures, not tests (make bench): the PUDA pool, then the data path's
# fast-registration cycle on every device in the same boot.
if [ "$RSIM_MODE" = bench ]; then
	insmod "$RSIM_MODDIR/tools/bench/rdmasim_bench.ko"
	RSIM_CONF_ARGS=${RSIM_CONF_ARGS:-suites=bench} conformance
	finish
fi

if [ "$RSIM_MODE" = demo ]; then
	. "$RSIM_TOP/scripts/uml-demo.sh"
	finish
fi

if [ "$RSIM_MODE" = conformance ]; then
	conformance
	finish
fi

# development: a script of the caller's (RSIM_UML_ARGS=RSIM_SCRIPT=<path>)
if [ "$RSIM_MODE" = script ]; then
	. "$RSIM_SCRIPT"
	finish
fi

# The KUnit suites: KTAP between two markers for kunit.py parse.
say "RSIM-KTAP-BEGIN"
insmod "$RSIM_MODDIR/kunit/rdmasim_kunit.ko"
say "RSIM-KTAP-END"
check "rmmod_rdmasim_kunit" rmmod rdmasim_kunit

conformance

. "$RSIM_TOP/scripts/uml-selftest.sh"

# Unloading rdmasim while a kernel client holds a PD, CQ, QP and MR on
# rdmasim0: the client's remove() releases them, the unload completes.
check "client_holds_objects" insmod "$RSIM_MODDIR/tools/demo/rdmasim_demo.ko" hold=1
check "rdmasim0_counts_held_mr" sh -c \
	"awk '\$1 == \"mr\" { exit !(\$2 == 1) }' /sys/kernel/debug/rdmasim/rdmasim0/resources"
check "rmmod_rdmasim_under_client" rmmod rdmasim
check "client_released_objects" sh -c 'dmesg | grep -q "rdmasim0: released what it held"'
check "rmmod_client" rmmod rdmasim_demo

# A kernel client with a PUDA pool in use: rdmasim cannot go until the
# client does; then unload and reload are clean.
check "reload_rdmasim" insmod "$RDRV/rdmasim.ko"
check "client_holds_puda_pool" insmod "$RSIM_MODDIR/tools/demo/rdmasim_puda_demo.ko"
check "puda_pool_buffers_out" sh -c \
	'grep -qx "outstanding 2" /sys/kernel/debug/rdmasim/puda/rdmasim_puda_demo-*/stats'
check "rmmod_rdmasim_refused_while_pool_in_use" sh -c '! rmmod rdmasim'
check "rdmasim0_still_there" test -d /sys/class/infiniband/rdmasim0
check "rmmod_pool_client" rmmod rdmasim_puda_demo
check "pool_client_returned_everything" sh -c \
	'dmesg | grep -q "rdmasim_puda_demo: pool destroyed, 0 buffer(s) were still out"'
check "rmmod_rdmasim_after_client" rmmod rdmasim
check "rdmasim_gone" sh -c '! ls /sys/class/infiniband | grep -q rdmasim'
. "$RSIM_TOP/scripts/uml-selftest-modparams.sh"
check "rxe0_del" rdma link del rxe0
check "siw0_del" rdma link del siw0
check "rmmod_rdma_rxe" rmmod rdma_rxe
check "rmmod_siw" rmmod siw
finish
