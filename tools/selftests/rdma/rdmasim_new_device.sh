#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# rdmasim's devices made and removed through the platform driver's
# new_device and del_device files: a device with a LID of its own, one
# whose SA stays silent, and the refusals of a taken number, an unknown
# attribute and bad values, each with its errno (each makes nothing).
# Skips without root or without the rdmasim module.

# shellcheck source=/dev/null
source "$(dirname "$0")/../kselftest/ktap_helpers.sh"

DRV=/sys/bus/platform/drivers/rdmasim
IB=/sys/class/infiniband
ID=57
ID2=58
LOADED=0

cleanup() {
	echo "$ID" >"$DRV/del_device" 2>/dev/null
	echo "$ID2" >"$DRV/del_device" 2>/dev/null
	[ "$LOADED" = 1 ] && modprobe -r rdmasim 2>/dev/null
}

if [ "$(id -u)" != 0 ]; then
	echo "SKIP: needs root" >&2
	exit "$KSFT_SKIP"
fi
if [ ! -d /sys/module/rdmasim ]; then
	if ! modprobe rdmasim 2>/dev/null; then
		echo "SKIP: no rdmasim module" >&2
		exit "$KSFT_SKIP"
	fi
	LOADED=1
fi
trap cleanup EXIT

# new_device takes "ID [lid=N] [sa=0|1] [dma_pci=DDDD:BB:DD.F]"
new_device() {
	echo "$1" >"$DRV/new_device" 2>/dev/null
}
# refused_with LINE ID MESSAGE: new_device refuses LINE with the errno
# whose message bash's echo prints, and makes no rdmasim<ID>
refused_with() {
	local out
	out=$( { echo "$1" >"$DRV/new_device"; } 2>&1) && return 1
	case $out in *"$3"*) gone "$2" ;; *) echo "$out" >&2; return 1 ;; esac
}
has_lid() {
	[ "$(cat "$IB/rdmasim$1/ports/1/lid" 2>/dev/null)" = "$2" ]
}
gone() {
	[ ! -e "$IB/rdmasim$1" ]
}
# ktap_test_result runs its command unquoted: each test is one word
first() {
	new_device "$ID lid=0x4c5"
}
first_lid() {
	has_lid "$ID" 0x4c5
}
taken() {
	refused_with "$ID" "$ID2" "File exists"
}
unknown_attr() {
	refused_with "$ID2 colour=red" "$ID2" "Invalid argument"
}
lid_0() {
	refused_with "$ID2 lid=0" "$ID2" "Invalid argument"
}
lid_mcast() {
	refused_with "$ID2 lid=0xc000" "$ID2" "Invalid argument"
}
dma_pci_malformed() {
	refused_with "$ID2 dma_pci=0000:00:1f.8" "$ID2" "Invalid argument"
}
# no PCI function there (domain 0xfffe is not a host bridge's)
dma_pci_absent() {
	refused_with "$ID2 dma_pci=fffe:ff:1f.7" "$ID2" "No such device"
}
silent_sa() {
	new_device "$ID2 lid=0x4c6 sa=0"
}
both_deleted() {
	echo "$ID" >"$DRV/del_device" && echo "$ID2" >"$DRV/del_device" &&
		gone "$ID" && gone "$ID2"
}

ktap_print_header
ktap_set_plan 10
ktap_test_result "new_device with a LID" first
ktap_test_result "the port has it" first_lid
ktap_test_result "a taken number refused" taken
ktap_test_result "an unknown attribute refused" unknown_attr
ktap_test_result "LID 0 refused" lid_0
ktap_test_result "a multicast LID refused" lid_mcast
ktap_test_result "a malformed PCI function refused" dma_pci_malformed
ktap_test_result "an absent PCI function refused" dma_pci_absent
ktap_test_result "new_device with a silent SA" silent_sa
ktap_test_result "del_device removes both" both_deleted
ktap_finished
