# shellcheck shell=sh
# SPDX-License-Identifier: GPL-2.0-only
#
# rdmasim: the reproducer of a finding (Documentation/ulps.rst, "Findings"):
# blktests' srp group (a608cb5) takes every RDMA port for one with a
# netdev. Its rdma_dev_to_net_dev() (tests/srp/rc) is
#
#   rdma link show "$1/1" | sed 's/.* netdev //;s/[[:blank:]]*$//'
#
# which, for a port that has no netdev (an InfiniBand port without IPoIB:
# rdmasim0 here, as a real HCA's), prints the whole "link ..." line and
# succeeds; its callers then take that line for an interface name
# (get_ipv4_addr, /sys/class/net/<it>/ifindex). The function is taken from
# the blktests tree itself, so the check follows the tree. Run it with
#
#   make script SCRIPT=scripts/guest/finding-blktests-srp-ib-port.sh
#
# which fails while the finding stands. Needs rdmasim0 (the boot's
# default) and the blktests tree of ../shared/peers (BLKTESTS_TREE= on the
# kernel command line for another).

bt=${BLKTESTS_TREE:-$RSIM_TOP/../shared/peers/blktests-a608cb5}
check "srp_ib_port_blktests_tree" test -f "$bt/tests/srp/rc"
sed -n '/^rdma_dev_to_net_dev()/,/^}/p' "$bt/tests/srp/rc" >/run/srp-fn.sh
check "srp_ib_port_function_found" test -s /run/srp-fn.sh
# shellcheck disable=SC1091 # blktests' own function
. /run/srp-fn.sh
check "srp_ib_port_is_infiniband" sysfs_is \
	/sys/class/infiniband/rdmasim0/ports/1/link_layer InfiniBand
d=$(rdma_dev_to_net_dev rdmasim0)
say "RSIM-FINDING rdma_dev_to_net_dev rdmasim0 printed: $d"
# the finding: a port without a netdev must give no interface name
check "srp_ib_port_no_netdev_named" test -z "$d"
