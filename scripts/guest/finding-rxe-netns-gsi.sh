# shellcheck shell=sh
# SPDX-License-Identifier: GPL-2.0-only
#
# rdmasim: the reproducer of a finding (Documentation/ulps.rst, "Findings"):
# an rxe device moved to another network namespace ("rdma system set netns
# exclusive", then "rdma dev set <dev> netns <ns>") comes up there without
# QP1: the core removes and re-adds its clients, ib_mad destroys the GSI
# QP and creates it again, and rxe refuses the second one ("GSI QP exists
# for port 1", -EINVAL; the kernel logs "Couldn't create ib_mad QP1" and
# "Couldn't open port 1"), because rxe_qp_chk_init()
# (drivers/infiniband/sw/rxe/rxe_qp.c) tests port->qp_gsi_index, which
# rxe_qp_init_req() sets and nothing clears. Without QP1 the device has no
# CM MADs in its new namespace: rdma_cm cannot connect through it. Found by
# the kernel's selftests/rdma rxe_netns_names.sh under make peers, which
# passes anyway (it checks names only). The same moves on a RoCE-mode
# rdmasim device, whose QP1 comes back, show the check. Run it with
#
#   make script SCRIPT=scripts/guest/finding-rxe-netns-gsi.sh
#
# which fails, on rxe's checks, while the finding stands. Uses guest/lib.sh's
# helpers; rdma_rxe and rdmasim are loaded by the boot.

# gsi_qp dev [ns]: <dev>'s restrack (seen from namespace <ns>) lists QP 1
gsi_qp() {
	if [ -n "${2:-}" ]; then
		ip netns exec "$2" rdma res show qp link "$1/1"
	else
		rdma res show qp link "$1/1"
	fi >/run/gsi-qp 2>&1 && has_line /run/gsi-qp "*lqpn 1 *"
}

# no_line file pattern: no line of <file> matches <pattern>
no_line() {
	! has_line "$1" "$2" >/dev/null
}

check "gsi_exclusive_mode" rdma system set netns exclusive
check "gsi_netns" ip netns add rsim_gsi
for t in rxe rdmasim; do
	d=rsim_g$t
	check "gsi_${t}_veth" sh -c "ip link add $d type veth peer name ${d}p &&
		ip link set $d up && ip link set ${d}p up" || continue
	check "gsi_${t}_link_add" rdma link add "$d" type $t netdev "$d" || continue
	check "gsi_${t}_port_active" wait_for "$d's port" 60 port_active "$d"
	check "gsi_${t}_qp1_before" gsi_qp "$d"
	check "gsi_${t}_moved" rdma dev set "$d" netns rsim_gsi || continue
	dmesg >/run/gsi-dmesg
	# the finding: rxe refuses its QP1 in the new namespace
	check "gsi_${t}_qp1_created" no_line /run/gsi-dmesg "*$d: Couldn't create ib_mad QP1*"
	check "gsi_${t}_qp1_in_netns" gsi_qp "$d" rsim_gsi
done
check "gsi_netns_del" ip netns del rsim_gsi
# the devices come back to init_net (rdma_dev_exit_net) before their
# veths go; the mode changes back once the namespace is gone
for t in rxe rdmasim; do
	check "gsi_${t}_back" wait_for "rsim_g$t back in init_net" 60 \
		sh -c "rdma link show | grep -qw 'netdev rsim_g$t'"
	check "gsi_${t}_veth_del" ip link del "rsim_g$t"
done
check "gsi_shared_mode" wait_for "shared mode" 30 rdma system set netns shared
