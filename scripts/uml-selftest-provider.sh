# shellcheck shell=sh
# SPDX-License-Identifier: GPL-2.0-only
#
# rdmasim: the libibverbs provider (tools/provider, built against
# scripts/rdma-core.sh's rdma-core), sourced by uml-selftest.sh inside the
# UML test kernel with rdmasim0 loaded, when run-uml.sh passes
# RSIM_RDMA_CORE_ENV (the build's rsim-env.sh; rsim_uml_ready sets it).
# The build's ibv_devices and ibv_devinfo (-v) -d rdmasim0 run as host
# binaries through hostfs with RDMAV_DRIVERS naming the provider (the
# build's etc/libibverbs.d is not written: hostfs is mounted read-only),
# and what they print is checked against sysfs and rdmasim's debugfs;
# then ibv_rc_pingpong runs between two processes on rdmasim0.
# Uses check(), capture(), has_line() and say() from uml-init.sh, and $IB,
# $DBG and RSIM_MODDIR from uml-selftest.sh.

# pv_kv file key: the value of the first "key[:] value" line of file in $val
pv_kv() {
	local k v
	while read -r k v; do
		case $k in "$2" | "$2:") val=$v; return 0 ;; esac
	done <"$1"
	val=
	echo "$1: no $2"
	return 1
}

# pv_same file key expected: <key>'s value in <file> is <expected>
pv_same() {
	pv_kv "$1" "$2" || return 1
	[ "$val" = "$3" ] || { echo "$1: $2 '$val' != '$3'"; return 1; }
}

PROVIDER=$RSIM_MODDIR/tools/provider/librdmasim

if [ -n "${RSIM_RDMA_CORE_ENV:-}" ] && [ -f "$RSIM_RDMA_CORE_ENV" ]; then
	# shellcheck disable=SC1090 # the build's
	. "$RSIM_RDMA_CORE_ENV"
	check "provider_built" test -f "$PROVIDER-rdmav$RSIM_RDMA_CORE_PABI.so"

	capture /run/ibv-devices env RDMAV_DRIVERS="$PROVIDER" \
		"$RSIM_RDMA_CORE_BIN/ibv_devices"
	capture /run/ibv-devinfo env RDMAV_DRIVERS="$PROVIDER" \
		"$RSIM_RDMA_CORE_BIN/ibv_devinfo" -d rdmasim0
	capture /run/ibv-devinfo-v env RDMAV_DRIVERS="$PROVIDER" \
		"$RSIM_RDMA_CORE_BIN/ibv_devinfo" -v -d rdmasim0
	capture /run/ibv-devices-none "$RSIM_RDMA_CORE_BIN/ibv_devices"
	for f in ibv-devices ibv-devinfo ibv-devinfo-v; do
		while IFS= read -r l; do
			say "RSIM-PROVIDER $f: $l"
		done </run/$f
	done

	# the node GUID as ibv_devices prints it (16 hex digits, no colons)
	provider_ibv_devices() {
		local g
		read -r g <"$IB/rdmasim0/node_guid"
		g=$(echo "$g" | tr -d :)
		has_line /run/ibv-devices "*rdmasim0*$g"
	}
	check "provider_ibv_devices_lists_rdmasim0" provider_ibv_devices
	# without the provider libibverbs has no driver for it
	provider_needed() {
		! has_line /run/ibv-devices-none "*rdmasim0*" >/dev/null
	}
	check "provider_ibv_devices_needs_provider" provider_needed

	provider_devinfo_sysfs() {
		local f="$1" g fw lid smlid
		read -r g <"$IB/rdmasim0/node_guid"
		read -r fw <"$IB/rdmasim0/fw_ver"
		read -r lid <"$IB/rdmasim0/ports/1/lid"
		read -r smlid <"$IB/rdmasim0/ports/1/sm_lid"
		pv_same "$f" hca_id rdmasim0 &&
		pv_same "$f" transport "InfiniBand (0)" &&
		pv_same "$f" node_guid "$g" &&
		pv_same "$f" sys_image_guid "$g" &&
		pv_same "$f" fw_ver "$fw" &&
		pv_same "$f" vendor_id 0xffffff &&
		pv_same "$f" phys_port_cnt 1 &&
		pv_same "$f" state "PORT_ACTIVE (4)" &&
		pv_same "$f" port_lid $((lid)) &&
		pv_same "$f" sm_lid $((smlid)) &&
		pv_same "$f" link_layer InfiniBand &&
		pv_same "$f" max_mtu "4096 (5)"
	}
	check "provider_ibv_devinfo_vs_sysfs" provider_devinfo_sysfs /run/ibv-devinfo
	check "provider_ibv_devinfo_v_vs_sysfs" provider_devinfo_sysfs /run/ibv-devinfo-v

	# the port's MTU and physical state as rdmasim's debugfs has them
	provider_devinfo_port() {
		local f=/run/ibv-devinfo-v mtu
		pv_kv "$DBG/rdmasim0/port" mtu || return 1
		mtu=$val
		pv_kv $f active_mtu || return 1
		case $val in "$mtu ("*")") ;; *) echo "active_mtu '$val', debugfs mtu $mtu"; return 1 ;; esac
		pv_same $f phys_state "LINK_UP (5)"
	}
	check "provider_ibv_devinfo_v_port" provider_devinfo_port

	# every limit debugfs lists that ibv_devinfo -v prints
	provider_devinfo_limits() {
		local k
		for k in max_pd max_mr max_cq max_cqe max_qp max_qp_wr max_ah \
			 max_pkeys max_qp_rd_atom max_qp_init_rd_atom \
			 max_mr_size page_size_cap; do
			pv_kv "$DBG/rdmasim0/limits" $k || return 1
			pv_same /run/ibv-devinfo-v $k "$val" || return 1
		done
	}
	check "provider_ibv_devinfo_v_limits" provider_devinfo_limits

	# ibv_rc_pingpong between two processes over rdmasim0 (user CQs and
	# QPs, the kernel's post and poll commands, data checked with -c);
	# the two exchange their QP numbers over TCP on lo
	# listening port: whether /proc/net/tcp has :<hex port> in LISTEN (0A)
	listening() {
		local _sl local_addr _rem st rest f
		for f in /proc/net/tcp /proc/net/tcp6; do
			[ -r $f ] || continue
			while read -r _sl local_addr _rem st rest; do
				case $local_addr in *":$1") [ "$st" = 0A ] && return 0 ;; esac
			done <$f
		done
		return 1
	}
	provider_rc_pingpong() {
		local srv i rc=0
		ip link set lo up
		timeout 60 env RDMAV_DRIVERS="$PROVIDER" "$RSIM_RDMA_CORE_BIN/ibv_rc_pingpong" \
			-d rdmasim0 -g 0 -c -n 100 >/run/pp-srv 2>&1 &
		srv=$!
		i=0
		while ! listening 4853 && [ $i -lt 120 ]; do
			sleep 0.5
			i=$((i + 1))
		done
		timeout 60 env RDMAV_DRIVERS="$PROVIDER" "$RSIM_RDMA_CORE_BIN/ibv_rc_pingpong" \
			-d rdmasim0 -g 0 -c -n 100 localhost >/run/pp-cli 2>&1 || rc=$?
		wait $srv || rc=$((rc + 100))
		for f in pp-srv pp-cli; do
			while IFS= read -r l; do
				say "RSIM-PROVIDER $f: $l"
			done </run/$f
		done
		[ $rc = 0 ] && has_line /run/pp-srv "*100 iters in*" &&
			has_line /run/pp-cli "*100 iters in*"
	}
	check "provider_ibv_rc_pingpong" provider_rc_pingpong
else
	say "RSIM-PROVIDER skipped: no RSIM_RDMA_CORE_ENV (no rdma-core build)"
fi
