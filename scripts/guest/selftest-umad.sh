# shellcheck shell=sh
# shellcheck disable=SC2154 # val: set by guest/lib.sh's kv(), field() and res_line()
# SPDX-License-Identifier: GPL-2.0-only
#
# rdmasim: userspace management datagrams, sourced by guest/selftest.sh inside
# the UML test kernel with rdmasim0 loaded: tools/umad's libibumad client
# (built on the host, run through hostfs) checked against sysfs,
# infiniband-diags as a user types them, and a umad reader blocked in
# read() while its device is deleted. Uses check(), capture(), has_line()
# and say() from guest/init-uml.sh, and $IB, field(), ctl() and RSIM_MODDIR from
# guest/selftest.sh; defines umad_reader_start and umad_reader_ended for the
# unload check of guest/selftest.sh.

UMAD=$RSIM_MODDIR/tools/umad/rsim_umad
P1="$IB/rdmasim0/ports/1"

# umad file args...: run rsim_umad once into <file>, then "exit <status>"
umad() {
	local f="$1" rc=0
	shift
	capture "$f" "$UMAD" "$@" || rc=$?
	echo "exit $rc" >>"$f"
}


# umad_matches_sysfs file route: rsim_umad's NodeInfo and PortInfo, read
# over <route>, are what sysfs says
umad_matches_sysfs() {
	local f="$1" a b c d x v
	has_line "$f" "exit 0" && has_line "$f" "Route $2" || return 1
	IFS=: read -r a b c d <"$IB/rdmasim0/node_guid"
	has_line "$f" "NodeGUID 0x$a$b$c$d" || return 1
	# the port GUID is GID 0's interface ID
	IFS=: read -r x x x x a b c d <"$P1/gids/0"
	has_line "$f" "PortGUID 0x$a$b$c$d" || return 1
	read -r v x <"$IB/rdmasim0/node_type"
	has_line "$f" "NodeType ${v%:}" && has_line "$f" "NumPorts 1" || return 1
	read -r v <"$P1/lid"
	has_line "$f" "LID $((v))" || return 1
	read -r v <"$P1/sm_lid"
	has_line "$f" "SMLID $((v))" || return 1
	read -r v x <"$P1/state"
	has_line "$f" "PortState ${v%:}" || return 1
	read -r v x <"$P1/phys_state"
	has_line "$f" "PhysState ${v%:}"
}

read -r lid <"$P1/lid"
lid=$((lid))
umad /run/umad-dr -D nodeinfo portinfo
check "umad_directed_route_matches_sysfs" umad_matches_sysfs /run/umad-dr "directed 0"
umad /run/umad-lr nodeinfo portinfo
check "umad_lid_routed_matches_sysfs" umad_matches_sysfs /run/umad-lr "lid $lid"

# PortCounters through QP1; rsim_umad compares them with sysfs itself
umad /run/umad-pc counters
umad_counters() {
	has_line /run/umad-pc "exit 0" && kv /run/umad-pc PortXmitPkts &&
		[ "$val" -ge 1 ] && kv /run/umad-pc PortRcvData && [ "$val" -ge 64 ]
}
check "umad_port_counters_match_sysfs" umad_counters

umad /run/umad-un unknown
umad_unknown_attribute() {
	has_line /run/umad-un "exit 0" &&
		has_line /run/umad-un "SMPStatusDirected 0x000c" &&
		has_line /run/umad-un "SMPStatusLID 0x000c" &&
		has_line /run/umad-un "PMAStatus 0x000c"
}
check "umad_unknown_attribute_status" umad_unknown_attribute

# a read with room for less than one MAD is refused (EINVAL: the kernel
# returns ENOSPC only past an RMPP MAD's first segment) and loses nothing
umad /run/umad-sm small
umad_small_buffer() {
	has_line /run/umad-sm "exit 0" && has_line /run/umad-sm "SmallRecv -22 *" &&
		has_line /run/umad-sm "Length 256" && has_line /run/umad-sm "Requeued yes"
}
check "umad_recv_small_buffer_keeps_mad" umad_small_buffer

# umad_alloc()'s RMPP size rule: a 4 KiB vendor MAD, 19 segments
umad /run/umad-rm rmpp
umad_rmpp() {
	has_line /run/umad-rm "exit 0" && has_line /run/umad-rm "FirstRecv -28 *" &&
		kv /run/umad-rm NeededLength && [ "$val" -gt 256 ] &&
		has_line /run/umad-rm "Length $val" &&
		has_line /run/umad-rm "Payload 4096 bytes identical"
}
check "umad_rmpp_needed_length_and_payload" umad_rmpp

# infiniband-diags, as a user types them (ibstat, ibaddr, smpquery -D
# and perfquery are in guest/selftest.sh)
capture /run/lpi smpquery portinfo "$lid"
smpquery_lid_routed_portinfo() {
	local v x
	has_line /run/lpi "# Port info: Lid $lid port*" || return 1
	read -r v <"$P1/lid"
	field /run/lpi Lid && [ "$val" = $((v)) ] || return 1
	read -r v <"$P1/sm_lid"
	field /run/lpi SMLid && [ "$val" = $((v)) ] || return 1
	read -r v x <"$P1/state"
	field /run/lpi LinkState && [ "$x" = ACTIVE ] && [ "$val" = Active ]
}
check "smpquery_lid_routed_portinfo" smpquery_lid_routed_portinfo

capture /run/pqx perfquery -x
perfquery_extended() {
	has_line /run/pqx "# Port extended counters: Lid $lid port 1*" &&
		field /run/pqx PortXmitData && [ "$val" -ge 64 ] &&
		field /run/pqx PortUnicastXmitPkts && [ "$val" -ge 1 ] &&
		field /run/pqx PortMulticastXmitPkts && [ "$val" = 0 ]
}
check "perfquery_extended" perfquery_extended

# traffic (every perfquery is 4 MADs each way), then perfquery -R: the
# counters start again from what the reset and the next query send
capture /run/pq2 perfquery
capture /run/pqx2 perfquery -x
capture /run/pqr perfquery -R
capture /run/pq3 perfquery
capture /run/pqx3 perfquery -x
# counter_reset name before after: <before> had traffic, <after> is small
counter_reset() {
	local before after
	field "$2" "$1" || return 1
	before=$val
	field "$3" "$1" || return 1
	after=$val
	echo "$1: $before before perfquery -R, $after after"
	[ "$before" -ge 12 ] && [ "$after" -lt "$before" ] && [ "$after" -le 12 ]
}
perfquery_reset() {
	local f
	has_line /run/pq2 "# Port counters: Lid $lid port 1*" &&
		! has_line /run/pqr "*[Ee]rror*" >/dev/null || return 1
	for f in PortXmitPkts PortRcvPkts; do
		counter_reset $f /run/pq2 /run/pq3 &&
			counter_reset $f /run/pqx2 /run/pqx3 || return 1
	done
	# 64 words (256 bytes) per MAD
	field /run/pq3 PortXmitData && [ "$val" -le $((12 * 64)) ]
}
check "perfquery_reset_after_traffic" perfquery_reset

# A umad reader blocked in read() (umad_recv() without a timeout: poll(),
# then read()) while its device goes away: it gets an error and exits.
# umad_reader_start ca file: rsim_umad block in the background ($reader);
# waits until it is about to block
umad_reader_start() {
	# emptied here, not by the child's redirection, which could come
	# after the first look at the file
	: >"$2"
	"$UMAD" -C "$1" block >>"$2" 2>&1 &
	reader=$!
	if ! wait_for "rsim_umad to block on $1 (or to exit)" 120 \
		reader_ready "$1" "$2" || ! reader_alive; then
		cat "$2"
		return 1
	fi
}

# reader_ready ca file: the reader says it blocks, or it has exited
reader_ready() {
	has_line "$2" "Blocking $1 1" || ! reader_alive
}

# reader_alive: $reader runs (a zombie, exited but not reaped, does not)
reader_alive() {
	local s
	{ read -r s </proc/"$reader"/stat; } 2>/dev/null || return 1
	s=${s##*) }
	[ "${s%% *}" != Z ]
}

# umad_reader_ended file: the reader exited (within 120 s) with status 0
# (umad_recv() failed) and the error printed
umad_reader_ended() {
	local rc=0 l
	if ! wait_for "rsim_umad to exit after its device went" 120 \
		refused reader_alive; then
		kill "$reader"
		wait "$reader"
		return 1
	fi
	wait "$reader" || rc=$?
	while IFS= read -r l; do echo "$l"; done <"$1"
	[ $rc = 0 ] && has_line "$1" "RecvError [1-9]*"
}

check "new_device_8_for_umad_reader" ctl new_device 8
check "umad_reader_blocks_on_rdmasim8" umad_reader_start rdmasim8 /run/blk8
check "del_device_8_under_umad_reader" ctl del_device 8
check "umad_reader_error_on_device_removal" umad_reader_ended /run/blk8
check "del_device_8_is_gone" refused test -d "$IB/rdmasim8"
