# shellcheck shell=sh
# shellcheck disable=SC2154 # val: set by guest/lib.sh's kv()
# SPDX-License-Identifier: GPL-2.0-only
#
# rdmasim: RoCE mode's routing across network namespaces (roce.c,
# rsim_roce_route()), sourced by guest/init-uml.sh's netns part (in
# rdma-core's boot, after its tests), with rdma-core's build
# (rdma_core_env()). UD datagrams by GID alone
# (tools/provider/rsim_route: the two processes share no IP path) and
# rdma_cm through the kernel's CM (its REQs go through QP1, routed the
# same way):
#   - two veth pairs a1/b1 and a2/b2, each end in a namespace of its own,
#     with the same addresses (fe80::a, fe80::b); a third namespace's
#     netdev thief takes fe80::b too, and its device is made first (the
#     first one a search of every device would find); a netdev lone,
#     linked to nothing the senders have, holds fe80::c;
#   - no link: a1 to fe80::c (its neighbour entry forged) reaches
#     nothing (a1's roce_no_route counts it); a veth: a1 to fe80::b
#     reaches b1, never b2 or thief; the same address in two namespaces:
#     a2 to fe80::b reaches b2; the stolen address captures nothing, and
#     rping from a1's namespace to fe80::b%a1, with rping servers on b1
#     and on thief, connects to b1's;
#   - "rdma system set netns exclusive": a device outside its netdev's
#     namespace takes no part, moved into it ("rdma dev set ... netns")
#     it does;
#   - churn: "rdma link add" racing "ip link del" of its netdev, in a loop;
#     every netdev goes (none waits on a device), no device is left.
# Uses check(), capture(), has_line(), say(), wait_for(), kv() and
# uptime_s() from guest/lib.sh, $IB and $DBG from guest/init-uml.sh,
# rdma_core_env(), cm_pair() and ended() from guest/cm-pair.sh.

RT_PORT=18700
RT_N=8
RT_NS="rsn_c rsn_cz rsn_l rsn_lz rsn_a1 rsn_b1 rsn_a2 rsn_b2"

# rt_gid short: the sysfs form of fe80::<short>
rt_gid() {
	printf 'fe80:0000:0000:0000:0000:0000:0000:%04x' "0x$1"
}

# has_gid dev gid: <dev>'s GID table holds <gid> (sysfs form) as RoCE v2
has_gid() {
	local p="$IB/$1/ports/1" i t g
	for i in 0 1 2 3 4 5 6 7; do
		{ read -r t <"$p/gid_attrs/types/$i" && read -r g <"$p/gids/$i"; } \
			2>/dev/null || continue
		[ "$t" = "RoCE v2" ] && [ "$g" = "$2" ] && return 0
	done
	echo "$1: no RoCE v2 GID $2"
	return 1
}

# rt_net nsx ifx addrx nsy ify addry ...: for each six words, two new
# namespaces joined by a veth pair, each end up with lo and the one
# address fe80::<addr>. Batched: one "ip" for the namespaces and pairs,
# then one per namespace for its end (a program costs about half a
# second here: the 44 of the unbatched setup took 33 s)
rt_net() {
	local a="$*"
	# shellcheck disable=SC2086 # words on purpose
	{
		set -- $a
		while [ $# -ge 6 ]; do
			echo "netns add $1"
			echo "netns add $4"
			echo "link add name $2 netns $1 type veth peer name $5 netns $4"
			shift 6
		done
	} >/run/rt-batch
	ip -batch /run/rt-batch || return 1
	# shellcheck disable=SC2086
	set -- $a
	while [ $# -ge 3 ]; do
		printf '%s\n' "link set lo up" "link set dev $2 addrgenmode none" \
			"addr add fe80::$3/64 dev $2 nodad" "link set $2 up" \
			>/run/rt-batch
		ip -n "$1" -batch /run/rt-batch || return 1
		shift 3
	done
}

# rt_del ns...: those namespaces deleted, with one "ip"
rt_del() {
	local ns
	for ns in "$@"; do
		echo "netns del $ns"
	done >/run/rt-batch
	ip -batch /run/rt-batch
}

# rt_dev ns if: "rdma link add <if>_rdmasim" in <ns>, its GID there
rt_dev() {
	ip netns exec "$1" rdma link add "$2_rdmasim" type rdmasim netdev "$2" &&
		wait_for "$2_rdmasim's GID" 60 has_gid "$2_rdmasim" "$(rt_gid "$3")"
}

# rt_recv name ns dev addr: rsim_route recv in the background in <ns> (-:
# this one), on <dev>'s fe80::<addr>; its QP number in /run/rt-<name>.qpn
rt_recv() {
	local in=
	[ "$2" = - ] || in="ip netns exec $2"
	rm -f "/run/rt-$1.qpn" "/run/rt-$1.out" /run/rt-stop
	$in "$RT" recv "$3" "fe80::$4" "/run/rt-$1.qpn" \
		/run/rt-stop >"/run/rt-$1.out" 2>&1 &
	eval "rt_pid_$1=\$!"
}

# rt_two_listening port: two rdma_cm IDs listen on <port> (cm_pair's
# CM_READY while the stealer's server listens on it too)
rt_two_listening() {
	local l k=0
	rdma res show cm_id >/run/cm-ids 2>&1
	while IFS= read -r l; do
		case $l in *"state LISTEN"*":$1 "* | *"state LISTEN"*":$1") k=$((k + 1)) ;; esac
	done </run/cm-ids
	[ $k -ge 2 ] || { echo "$k listeners on $1"; return 1; }
}

rt_qpn_ready() {
	[ -s "/run/rt-$1.qpn" ]
}

# rt_send ns dev addr daddr qpnfile: RT_N datagrams, all sent
rt_send() {
	local q
	read -r q <"$5" || return 1
	ip netns exec "$1" "$RT" send "$2" "fe80::$3" "fe80::$4" "$q" $RT_N \
		>/run/rt-send.out 2>&1
	has_line /run/rt-send.out "sent $RT_N" || { cat /run/rt-send.out; return 1; }
}

# rt_stop names...: the receivers end; each one's count in rt_got_<name>
rt_stop() {
	local r p l
	: >/run/rt-stop
	for r in "$@"; do
		eval "p=\$rt_pid_$r"
		wait "$p"
		while IFS= read -r l; do
			say "RSIM-NETNS $r: $l"
			case $l in "received "*) eval "rt_got_$r=\${l#received }" ;; esac
		done <"/run/rt-$r.out"
	done
}

# rt_expect name n: receiver <name> got <n> datagrams
rt_expect() {
	local got f
	eval "got=\${rt_got_$1:-none}"
	[ "$got" = "$2" ] && return 0
	echo "$1 received $got, $2 expected"
	# where the datagrams went: each device's RoCE routing counters
	for f in "$DBG"/*/datapath; do
		grep -H -e "^wqes" -e "^errors" -e "^roce" "$f" 2>/dev/null
	done
	return 1
}

# rt_counter dev key: <dev>'s datapath counter in $val
rt_counter() {
	kv "$DBG/$1/datapath" "$2"
}

# rt_same_qpns names...: the receivers' QPs have one number (a datagram
# routed to the wrong device would find a QP there too)
rt_same_qpns() {
	local r q first=
	for r in "$@"; do
		read -r q <"/run/rt-$r.qpn" || return 1
		[ -z "$first" ] && first=$q
		[ "$q" = "$first" ] || { echo "$r's QP is $q, not $first"; return 1; }
	done
}

# rt_no_device prefix: no rdmasim device named <prefix>*_rdmasim is left
rt_no_device() {
	local d
	for d in "$IB"/"$1"*_rdmasim; do
		[ -e "$d" ] && { echo "$d is still there"; return 1; }
	done
	return 0
}

# rt_churn n: <n> times, a veth pair made, "rdma link add" on one end in
# the background while the pair is deleted; every "ip link del" returns
# (none waits on a device's hold: 30 s each at most) and every device goes
rt_churn() {
	local i add t0
	for i in $(seq 1 "$1"); do
		ip link add name rsim_ch0 type veth peer name rsim_ch1 || return 1
		ip link set rsim_ch0 up
		rdma link add rsim_ch0_rdmasim type rdmasim netdev rsim_ch0 \
			>/dev/null 2>&1 &
		add=$!
		# every few rounds the add first, then the delete on its heels
		[ $((i % 3)) = 0 ] && wait $add
		uptime_s
		t0=$up
		timeout 30 ip link del rsim_ch0 ||
			{ echo "round $i: ip link del did not return"; return 1; }
		wait $add
		uptime_s
		[ $((up - t0)) -lt 30 ] || { echo "round $i: $((up - t0)) s"; return 1; }
		wait_for "round $i's device to go" 30 rt_no_device rsim_ch || return 1
	done
	[ ! -e /sys/class/net/rsim_ch0 ] && [ ! -e /sys/class/net/rsim_ch1 ]
}

if rdma_core_env && [ -x "$RSIM_MODDIR/tools/provider/rsim_route" ]; then
	RT="$RSIM_MODDIR/tools/provider/rsim_route"
	rt_setup() {
		rt_net rsn_c thief b rsn_cz thiefz d rsn_l lone c rsn_lz lonez e \
			rsn_a1 a1 a rsn_b1 b1 b rsn_a2 a2 a rsn_b2 b2 b
	}
	check "netns_setup" rt_setup
	# the stealer's device first: the first one a search would meet
	check "netns_dev_stealer" rt_dev rsn_c thief b
	check "netns_dev_lone" rt_dev rsn_l lone c
	check "netns_dev_a1" rt_dev rsn_a1 a1 a
	check "netns_dev_b1" rt_dev rsn_b1 b1 b
	check "netns_dev_a2" rt_dev rsn_a2 a2 a
	check "netns_dev_b2" rt_dev rsn_b2 b2 b

	# no link: fe80::c is only lone's, whose link a1 has no part in. The
	# core resolves an AH's MAC through the sender's neighbours: a1's
	# namespace is told lone's, as a stale or forged entry would
	lmac=$(ip netns exec rsn_l cat /sys/class/net/lone/address)
	check "netns_no_link_neighbour" ip -n rsn_a1 neigh add fe80::c \
		lladdr "$lmac" dev a1 nud permanent
	rt_counter a1_rdmasim roce_no_route && nr=$val
	rt_recv l rsn_l lone_rdmasim c
	check "netns_lone_listens" wait_for "l's receiver" 30 rt_qpn_ready l
	check "netns_no_link_sent" rt_send rsn_a1 a1_rdmasim a c /run/rt-l.qpn
	rt_stop l
	check "netns_no_link_nothing" rt_expect l 0
	no_route_counted() {
		rt_counter a1_rdmasim roce_no_route || return 1
		[ "$val" -ge $((nr + RT_N)) ] && return 0
		echo "a1's roce_no_route $nr -> $val"
		return 1
	}
	check "netns_no_link_counted" no_route_counted

	# a veth: fe80::b is b1's, b2's and c's; a1 reaches b1 only
	rt_recv c rsn_c thief_rdmasim b
	rt_recv b1 rsn_b1 b1_rdmasim b
	rt_recv b2 rsn_b2 b2_rdmasim b
	for r in c b1 b2; do
		check "netns_${r}_listens" wait_for "$r's receiver" 30 rt_qpn_ready $r
	done
	check "netns_receivers_one_qpn" rt_same_qpns c b1 b2
	check "netns_veth_sent" rt_send rsn_a1 a1_rdmasim a b /run/rt-b1.qpn
	rt_stop c b1 b2
	check "netns_veth_delivered" rt_expect b1 $RT_N
	check "netns_veth_not_b2" rt_expect b2 0
	check "netns_stolen_address_nothing" rt_expect c 0

	# the same address in another namespace pair: a2 reaches b2
	rt_recv c rsn_c thief_rdmasim b
	rt_recv b1 rsn_b1 b1_rdmasim b
	rt_recv b2 rsn_b2 b2_rdmasim b
	for r in c b1 b2; do
		check "netns_${r}_listens_again" wait_for "$r's receiver" 30 rt_qpn_ready $r
	done
	check "netns_same_address_sent" rt_send rsn_a2 a2_rdmasim a b /run/rt-b2.qpn
	rt_stop c b1 b2
	check "netns_same_address_own_peer" rt_expect b2 $RT_N
	check "netns_same_address_not_b1" rt_expect b1 0
	check "netns_same_address_not_c" rt_expect c 0

	# rdma_cm: the kernel CM's REQ goes where the data goes. c's server
	# listens on the stolen address first; a1's client reaches b1's
	ip netns exec rsn_c timeout 120 "$CMB/rping" -s -a "fe80::b%thief" \
		-p $RT_PORT -C 3 -v >/run/rt-rping-c 2>&1 &
	rping_c=$!
	check "netns_stealer_listens" wait_for "c's rping" 60 cm_listening $RT_PORT
	# shellcheck disable=SC2034 # cm_pair()'s
	CM_READY=rt_two_listening
	check "netns_rping_reaches_peer" cm_pair rt-rping $RT_PORT \
		"ip netns exec rsn_b1 $CMB/rping -s -a fe80::b%b1 -p $RT_PORT -C 3 -V -v" \
		"ip netns exec rsn_a1 $CMB/rping -c -a fe80::b%a1 -p $RT_PORT -C 3 -V"
	unset CM_READY
	check "netns_rping_peer_data" has_line /run/rt-rping-srv \
		"*server ping data: rdma-ping-*"
	kill $rping_c 2>/dev/null
	wait $rping_c
	stealer_idle() {
		! has_line /run/rt-rping-c "*ping data*" >/dev/null ||
			{ cat /run/rt-rping-c; return 1; }
	}
	check "netns_rping_stealer_nothing" stealer_idle

	rt_teardown() {
		# shellcheck disable=SC2086 # one word per namespace
		rt_del $RT_NS || return 1
		wait_for "the namespaces' devices to go" 60 rt_no_device ""
	}
	check "netns_teardown" rt_teardown

	# exclusive mode: a device counts where the core lets its netdev's
	# namespace use it
	check "netns_exclusive_on" rdma system set netns exclusive
	ex_setup() {
		rt_net rsn_e1 e1 e1 rsn_e2 e2 e2 &&
			rt_dev rsn_e1 e1 e1 && rt_dev rsn_e2 e2 e2 &&
			rdma dev set e1_rdmasim netns rsn_e1
	}
	check "netns_exclusive_setup" ex_setup
	# e2's device is still in the initial namespace, its netdev not
	rt_recv e2 - e2_rdmasim e2
	check "netns_exclusive_listens" wait_for "e2's receiver" 30 rt_qpn_ready e2
	check "netns_exclusive_sent" rt_send rsn_e1 e1_rdmasim e1 e2 /run/rt-e2.qpn
	rt_stop e2
	check "netns_exclusive_outside_nothing" rt_expect e2 0
	check "netns_exclusive_move" rdma dev set e2_rdmasim netns rsn_e2
	rt_recv e2 rsn_e2 e2_rdmasim e2
	check "netns_exclusive_listens_moved" wait_for "e2's receiver" 30 rt_qpn_ready e2
	check "netns_exclusive_moved_sent" rt_send rsn_e1 e1_rdmasim e1 e2 /run/rt-e2.qpn
	rt_stop e2
	check "netns_exclusive_inside_delivered" rt_expect e2 $RT_N
	ex_teardown() {
		rt_del rsn_e1 rsn_e2 &&
			wait_for "the exclusive devices to go" 60 rt_no_device e &&
			wait_for "the namespaces to go" 60 rdma system set netns shared
	}
	check "netns_exclusive_off" ex_teardown

	# "rdma link add" racing the netdev's removal
	check "netns_churn_link_add_vs_ip_link_del" rt_churn 6
fi
