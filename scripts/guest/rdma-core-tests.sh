# shellcheck shell=sh
# SPDX-License-Identifier: GPL-2.0-only
#
# rdmasim: rdma-core's own tests (tests/, pyverbs) on each device of
# RSIM_RDMA_CORE_DEVS (rdmasim0 and rxe0 by default; rdmasim_rc0 is a
# RoCE-mode rdmasim device this script makes), one after the other
# in the same boot, sourced by guest/init-uml.sh for the "rdmacore" part with
# rxe0 and siw0 up (and rdmasim0, unless RSIM_RDMASIM=0). scripts/rdma-core-
# tests.py runs them (a timeout per test) and prints one RSIM-RDMACORE line
# per test and a total per device, which go to the console as they come;
# scripts/judge-rdma-core.py judges them on the host. RSIM_RDMA_CORE_ENV
# names the build's rsim-env.sh; the provider is RSIM_MODDIR's. Uses say()
# and check() from guest/init-uml.sh.

# the build's libraries and pyverbs, and rdmasim's provider where rdmasim
# is loaded (guest/lib.sh)
rdma_core_env
# the tests make temporary files (XRC's shared file, ...): / is read-only
mkdir -p /run/tmp
export TMPDIR=/run/tmp
# python's multiprocessing (the rdma_cm tests' two sides) needs /dev/shm,
# which the kernel's devtmpfs /dev lacks
mkdir -p /dev/shm
mount -t tmpfs -o mode=1777 shm /dev/shm

# rdma_core_tests dev: every test on dev, each line to the console
rdma_core_tests() {
	local l
	say "RSIM-RDMACORE-BEGIN $1"
	# RSIM_RDMA_CORE_TESTS (patterns) reaches the runner in its environment
	python3 "$RSIM_TOP/scripts/guest/rdma-core-tests.py" "$RSIM_RDMA_CORE_SRC" "$1" \
		"${RSIM_RDMA_CORE_TIMEOUT:-120}" 2>/run/rdma-core.err |
		while IFS= read -r l; do say "$l"; done
	[ -s /run/rdma-core.err ] && while IFS= read -r l; do
		say "RSIM-RDMACORE-STDERR $1: $l"
	done </run/rdma-core.err
	say "RSIM-RDMACORE-END $1"
}

rdma_core_done() {
	umount /dev/shm
}

# rdma_core_roce_up dev: <dev>, a RoCE-mode rdmasim device on one end of
# a veth pair (rsim_rc0, rsim_rc1) with IPv6 link-local addresses only,
# so that the rdma_cm and Ethernet-only tests run on rdmasim too
rdma_core_roce_up() {
	local i
	ip link add rsim_rc0 type veth peer name rsim_rc1 || return 1
	for i in rsim_rc0 rsim_rc1; do
		echo 0 >/proc/sys/net/ipv6/conf/$i/accept_dad
		ip link set $i up || return 1
	done
	wait_for "rsim_rc0's IPv6 link-local address" 60 ll_addr_ready \
		rsim_rc0 &&
		rdma link add "$1" type rdmasim netdev rsim_rc0 &&
		wait_for "$1's port to be ACTIVE" 60 port_active "$1" &&
		wait_for "$1's RoCE v2 GID" 60 roce_v2_gid "$1"
}

rdma_core_roce_down() {
	rdma link del "$1" && ip link del rsim_rc0
}

part rdmacore
# RSIM_RDMA_CORE_DEVS: devices separated by commas (one word of the
# kernel's command line)
ifs=$IFS
IFS=,
# shellcheck disable=SC2086 # split at the commas
set -- ${RSIM_RDMA_CORE_DEVS:-rdmasim0,rxe0}
IFS=$ifs
for dev in "$@"; do
	case $dev in
	rdmasim_rc0)
		check "rdma_core_${dev}_up" rdma_core_roce_up "$dev" || continue
		rdma_core_tests "$dev"
		check "rdma_core_${dev}_down" rdma_core_roce_down "$dev"
		;;
	*)
		rdma_core_tests "$dev"
		;;
	esac
done
check "rdma_core_umount_shm" rdma_core_done
