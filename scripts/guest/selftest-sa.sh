# shellcheck shell=sh
# shellcheck disable=SC2154 # val: set by guest/lib.sh's kv()
# SPDX-License-Identifier: GPL-2.0-only
#
# rdmasim: the subnet administrator (drivers/infiniband/sw/rdmasim/sa.c,
# mcast.c, sa_agent.c), sourced by guest/selftest-subnet.sh while
# rdmasim0 (LID 1, the master) and rdmasim1 (LID 2) are the subnet.
# infiniband-diags' saquery on rdmasim1 asks the SA at its SM LID, which
# is rdmasim0's: GetTable answers come back with RMPP.
#   - NodeRecord (both nodes, by LID, by name), PortInfoRecord (both
#     ports IsSM: saquery -s), PathRecord (every pair; 2 -> 1 with the
#     path's fields), MCMemberRecord (none before IPoIB joins), the SA's
#     ClassPortInfo; LinkRecord is not the SA's (MAD status 0x000c);
#   - the SA's faults (debugfs sa/): an error status for NodeRecord only,
#     a dropped request (saquery sends once: it times out), a delayed
#     answer; sa/stats counts them;
#   - IPoIB's broadcast group in sa/groups before anyone joins;
#   - tools/umad's SA fuzzer from both ports at once (below).
# Uses check(), capture(), has_line(), lines(), say(), copy_file() and
# kv() from guest/lib.sh,
# refused() and $DBG from guest/selftest.sh.

SAQ="saquery -C rdmasim1 -P 1"
SADBG=$DBG/sa

# shellcheck disable=SC2086 # $SAQ: words
capture /run/sa-nr $SAQ
check "sa_node_records" lines /run/sa-nr "*NodeDescription*rdmasim0" \
	"*NodeDescription*rdmasim1" "*lid*1" "*lid*2"
# shellcheck disable=SC2086
capture /run/sa-nr2 $SAQ 2
check "sa_node_record_by_lid" lines /run/sa-nr2 \
	"*port_guid*0x02ca510000000101" "*NodeDescription*rdmasim1"
# shellcheck disable=SC2086
capture /run/sa-nr3 $SAQ -N rdmasim0
check "sa_node_record_by_name" has_line /run/sa-nr3 "*NodeDescription*rdmasim0"
# shellcheck disable=SC2086
capture /run/sa-sm $SAQ -s
check "sa_port_info_is_sm" lines /run/sa-sm "*EndPortLid*1" "*EndPortLid*2" \
	"*master_sm_base_lid*1"
# every pair: 1 -> 1, 1 -> 2, 2 -> 1, 2 -> 2
sa_paths() {
	local n=0 l
	# shellcheck disable=SC2086
	$SAQ -p >/run/sa-pr 2>&1 || return 1
	while IFS= read -r l; do
		case $l in "PathRecord dump:") n=$((n + 1)) ;; esac
	done </run/sa-pr
	[ $n = 4 ] || { echo "$n PathRecords, 4 expected"; return 1; }
}
check "sa_path_records_every_pair" sa_paths
# shellcheck disable=SC2086
capture /run/sa-pr2 $SAQ -p --src-to-dst 2:1
# MTU 4096 (5), 100 Gb/s (16), lifetime 18, each with the selector "="
check "sa_path_record_2_to_1" lines /run/sa-pr2 "*dgid*fe80::2ca:5100:0:1" \
	"*dlid*1" "*slid*2" "*pkey*0xFFFF" "*mtu*0x85" "*rate*0x90" \
	"*pkt_life*0x92"
# shellcheck disable=SC2086
capture /run/sa-cpi $SAQ ClassPortInfo
check "sa_class_port_info" lines /run/sa-cpi "*Class version*2" \
	"*Capability mask 2*0x00001000"
# shellcheck disable=SC2086
check "sa_link_record_unsupported" refused capture /run/sa-lr $SAQ -x
check "sa_link_record_status" has_line /run/sa-lr "*returned 0x000c*"
check "sa_broadcast_group" has_line "$SADBG/groups" \
	"mgid ff12:401b:ffff:0000:0000:0000:ffff:ffff mlid 0xc000 qkey 0x00000b1b pkey 0xffff mtu 2048 *well-known"

sa_stat() {
	kv "$SADBG/stats" "$1"
}
# 24 tables in a row from one port, each ACKed to the end: none refused
# (an answer stays in flight for the RMPP timeout after its last ACK: with
# 1 s, the ninth of eight quick saquery runs was refused), and all end
sa_back_to_back() {
	local i=0 r0
	sa_stat rmpp_refused && r0=$val
	while [ $i -lt 24 ]; do
		# shellcheck disable=SC2086
		$SAQ >/run/sa-b2b 2>&1 ||
			{ echo "table $i:"; cat /run/sa-b2b; return 1; }
		i=$((i + 1))
	done
	sa_stat rmpp_refused && [ "$val" = "$r0" ] && return 0
	echo "rmpp_refused $r0 -> $val"
	return 1
}
check "sa_tables_back_to_back" sa_back_to_back
sa_none_in_flight() {
	sa_stat rmpp_in_flight && [ "$val" = 0 ]
}
check "sa_tables_all_ended" wait_for "the answers' ends" 10 sa_none_in_flight

# faults: an error status for NodeRecord (0x11) only, once
sa_stat failed && sa_failed=$val
echo 0x11 >"$SADBG/attr"
echo 0x0100 >"$SADBG/error_status"
echo 1 >"$SADBG/fault/status/fail_nth"
# shellcheck disable=SC2086
check "sa_path_not_failed" capture /run/sa-f1 $SAQ -p --src-to-dst 2:1
check "sa_status_fault_armed" has_line "$SADBG/fault/status/fail_nth" 1
# shellcheck disable=SC2086
check "sa_status_fault" refused capture /run/sa-f2 $SAQ 2
check "sa_status_fault_answer" has_line /run/sa-f2 "*returned 0x0100*"
# shellcheck disable=SC2086
check "sa_after_status_fault" capture /run/sa-f3 $SAQ 2
sa_failed_once() {
	sa_stat failed && [ "$val" = $((sa_failed + 1)) ]
}
check "sa_stats_failed" sa_failed_once
# a request dropped: saquery sends it once and times out; then delayed
# (the points are the module's: KUnit's rdmasim_sa may have used them)
sa_injected() {
	read -r val <"$SADBG/fault/$1/injected"
}
# sa_injected_one_more point before: <point> injected once since <before>
sa_injected_one_more() {
	sa_injected "$1" || return 1
	[ "$val" = $(($2 + 1)) ] && return 0
	echo "$1: injected $val, $(($2 + 1)) expected"
	return 1
}
echo 0 >"$SADBG/attr"
sa_injected drop && sa_drop0=$val
echo 1 >"$SADBG/fault/drop/fail_nth"
# shellcheck disable=SC2086
check "sa_drop_fault" refused capture /run/sa-f4 $SAQ -t 300 2
check "sa_drop_fault_injected" sa_injected_one_more drop "$sa_drop0"
echo 200 >"$SADBG/delay_ms"
sa_injected delay && sa_delay0=$val
echo 1 >"$SADBG/fault/delay/fail_nth"
# shellcheck disable=SC2086
check "sa_delay_fault_answered" capture /run/sa-f5 $SAQ -t 2000 2
check "sa_delay_fault_injected" sa_injected_one_more delay "$sa_delay0"
sa_rmpp() {
	sa_stat rmpp && [ "$val" -gt 0 ]
}
check "sa_stats_rmpp" sa_rmpp
echo 1000 >"$SADBG/delay_ms"

# A hostile umad client: tools/umad's safuzz, two processes at once (one
# on each port: the memberships each leaves at its end are its port's),
# each 400 requests to the SA, valid ones or random mutations of them,
# some with their RMPP headers as written (guest's seed, printed; set
# RSIM_SA_FUZZ_SEED to repeat a run). Every request ends exactly once,
# every answer is well formed, valid queries succeed, each port leaves
# what it joined, the SA still answers; its groups are as they were.
SA_UMAD=$RSIM_MODDIR/tools/umad/rsim_umad
sa_fuzz_seed=${RSIM_SA_FUZZ_SEED:-$(date +%s)}
say "RSIM-SA-FUZZ seed $sa_fuzz_seed"
copy_file "$SADBG/groups" /run/sa-groups0
sa_stat requests && sa_req0=$val
# sa_fuzz ca seed out: one process's run into <out>, then "exit <status>"
sa_fuzz() {
	"$SA_UMAD" -C "$1" -P 1 safuzz "$2" 400 >"$3" 2>&1
	echo "exit $?" >>"$3"
}
sa_fuzz rdmasim1 "$sa_fuzz_seed" /run/sa-fuzz1 &
sa_fuzz_p1=$!
sa_fuzz rdmasim0 $((sa_fuzz_seed + 1)) /run/sa-fuzz0 &
wait $sa_fuzz_p1 $!
for f in /run/sa-fuzz1 /run/sa-fuzz0; do
	while IFS= read -r l; do say "RSIM-SA-FUZZ $l"; done <$f
done
check "sa_fuzz_rdmasim1" lines /run/sa-fuzz1 "Sent 400" "exit 0"
check "sa_fuzz_rdmasim0" lines /run/sa-fuzz0 "Sent 400" "exit 0"
copy_file "$SADBG/groups" /run/sa-groups1
check "sa_fuzz_groups_as_before" cmp /run/sa-groups0 /run/sa-groups1
# most requests reached the SA (those with a class version other than 2,
# or another base version, do not)
sa_fuzzed() {
	sa_stat requests && [ "$val" -ge $((sa_req0 + 400)) ] && return 0
	echo "the SA counted $((val - sa_req0)) requests"
	return 1
}
check "sa_fuzz_reached_the_sa" sa_fuzzed
