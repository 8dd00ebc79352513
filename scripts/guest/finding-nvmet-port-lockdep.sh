# shellcheck shell=sh
# SPDX-License-Identifier: GPL-2.0-only
#
# rdmasim: the reproducer of a finding (Documentation/ulps.rst, "Findings"):
# lockdep reports a circular dependency between nvmet_config_sem and
# rdma_cm's handler_mutex when the subsystem is unlinked from an NVMe over
# RDMA port that still listens, after a host has connected. Transport
# independent (nvmet and rdma_cm; rxe reaches it the same way).
#
# The project's 7.3 test kernel carries the fix the finding proposes
# (kunit/patches/7.3/: listening IDs' handler_mutex in a lockdep class of
# their own), so there this is the fix's regression test:
#
#   make script SCRIPT=scripts/guest/finding-nvmet-port-lockdep.sh
#
# passes with no report, and fails (on the report, and on its last check)
# on a kernel without the patch, e.g. KSRC=<an unpatched 7.3 tree>.
# Uses guest/ulp-nvme.sh and guest/lib.sh's helpers.

DBG=/sys/kernel/debug/rdmasim
# shellcheck source=ulp-nvme.sh
. "$RSIM_TOP/scripts/guest/ulp-nvme.sh"

# both ends in init_net (nvmet-rdma's and nvme-rdma's namespace), the
# host on rsim_fv0_rdmasim, the target on rsim_fv1_rdmasim: the I/O
# queue's Connect command then tends to arrive before the target's
# ESTABLISHED event, and runs from the rdma_cm handler (the first chain
# of the report). It does not every time: five connections.
ip link add rsim_fv0 type veth peer name rsim_fv1
for i in rsim_fv0 rsim_fv1; do
	echo 0 >/proc/sys/net/ipv6/conf/$i/accept_dad
	ip link set $i up
done
for i in rsim_fv0 rsim_fv1; do
	check "finding_${i}_link_local" wait_for "$i's address" 60 ll_addr_ready $i
	check "finding_${i}_link_add" rdma link add ${i}_rdmasim type rdmasim netdev $i
	check "finding_${i}_gid" wait_for "the RoCE v2 GID" 60 roce_v2_gid ${i}_rdmasim
done
ip -6 -o addr show dev rsim_fv1 scope link >/run/fll
read -r _ _ _ a _ </run/fll
a=${a%%/*}
check "finding_modules" nvme_modules
check "finding_target_up" nvme_target_up "$a%rsim_fv1"
for try in 1 2 3 4 5; do
	check "finding_connect_$try" nvme_connect "$a%rsim_fv0"
	check "finding_namespace_$try" wait_for "the namespace" 30 nvme_ns_ready
	check "finding_disconnect_$try" \
		sh -c "echo 1 >/sys/class/nvme/$nvme_ctrl/delete_controller"
	check "finding_controller_gone_$try" wait_for "$nvme_ctrl to go" 30 \
		test ! -e "/sys/class/nvme/$nvme_ctrl"
done
# the unlink with the port listening: nvmet_port_subsys_drop_link() holds
# nvmet_config_sem (write) across nvmet_rdma_remove_port() ->
# rdma_destroy_id() of the listener, which takes its handler_mutex; the
# host's I/O queue Connect ran nvmet_execute_io_connect() ->
# nvmet_find_get_subsys() (nvmet_config_sem, read) under a connection's
# handler_mutex
check "finding_target_down" nvme_target_down
dmesg >/run/fdmesg
# (a pattern that does not match itself when a failure prints it)
check "finding_no_lockdep_report" \
	sh -c '! grep "circular lock[i]ng dependency" /run/fdmesg'
# a report turns lockdep off (debug_locks 0): still on after the unlink
check "finding_lockdep_still_on" has_line /proc/lockdep_stats "*debug_locks:*1"
for i in rsim_fv0 rsim_fv1; do
	rdma link del ${i}_rdmasim
done
ip link del rsim_fv0
