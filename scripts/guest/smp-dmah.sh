# shellcheck shell=sh
# SPDX-License-Identifier: GPL-2.0-only
#
# rdmasim: the userspace side of a DMA handle naming a CPU outside the
# caller's affinity, sourced by guest/init-uml.sh ("dmah" part) in the two-CPU
# boot with rdmasim0 loaded: tools/dmah's uverbs client restricts itself
# to its first CPU with sched_setaffinity() and must get EPERM for the
# other one, then the same handle once its affinity is back. Its whole
# errno table must hold on this kernel too. Uses check(), capture() and
# has_line() from guest/init-uml.sh and RSIM_MODDIR.

rc=0
capture /run/dmah-smp "$RSIM_MODDIR/tools/dmah/rsim_dmah" -d rdmasim0 || rc=$?
echo "exit $rc" >>/run/dmah-smp

dmah_smp_two_cpus() {
	local possible
	read -r possible </sys/devices/system/cpu/possible
	echo "possible CPUs: $possible"
	[ "$possible" != 0 ]
}
check "dmah_smp_two_possible_cpus" dmah_smp_two_cpus
dmah_smp_affinity() {
	has_line /run/dmah-smp "affinity cpu * allowed, cpu * not" &&
		has_line /run/dmah-smp "dmah cpu_outside_affinity EPERM" &&
		has_line /run/dmah-smp "dmah cpu_inside_affinity_again 0"
}
check "dmah_smp_cpu_outside_affinity_eperm" dmah_smp_affinity
dmah_smp_clean() {
	has_line /run/dmah-smp "exit 0" &&
		has_line /run/dmah-smp "result PASS (0 failures)"
}
check "dmah_smp_every_expectation" dmah_smp_clean
