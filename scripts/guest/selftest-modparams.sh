# shellcheck shell=bash
# SPDX-License-Identifier: GPL-2.0-only
#
# rdmasim: module parameter selftest, sourced by guest/selftest.sh inside the
# UML test kernel with rdmasim unloaded. Uses check(), $RDRV and $PLAT
# from guest/init-uml.sh and rdmasim_gone() from guest/selftest.sh.

# insmod_refused <message> <parameter>...: the load fails with the errno
# whose insmod message is <message>, and leaves nothing behind
insmod_refused() {
	local want=$1

	shift
	if insmod "$RDRV/rdmasim.ko" "$@" >/run/insmod.out 2>&1; then
		echo "insmod rdmasim.ko $* succeeded"
		rmmod rdmasim
		return 1
	fi
	cat /run/insmod.out
	grep -q "$want" /run/insmod.out && ! test -d "$PLAT" &&
		! test -d /sys/kernel/debug/rdmasim && rdmasim_gone
}

# base_lid must be a unicast LID (1..0xbfff, kmod says "Invalid
# parameters" for -EINVAL), and so must base_lid + N for every device the
# load creates (-ERANGE): nothing truncates to 16 bits
check "insmod_base_lid_0_refused" \
	insmod_refused "Invalid parameters" base_lid=0
check "insmod_base_lid_multicast_refused" \
	insmod_refused "Invalid parameters" base_lid=0xc000
check "insmod_base_lid_past_16_bits_refused" \
	insmod_refused "Invalid parameters" base_lid=0x10001
check "insmod_base_lid_no_room_refused" \
	insmod_refused "out of range" base_lid=0xbfff num_devices=2

# the kernel's generic async_probe=1 (like driver_async_probe=rdmasim)
# asks for asynchronous probing; creating devices must still work
check "insmod_rdmasim_async_probe" insmod "$RDRV/rdmasim.ko" async_probe=1
# insmod returns before an asynchronous probe has run
check "async_probe_created_rdmasim0" wait_for "rdmasim0 from the asynchronous probe" \
	60 test -d /sys/class/infiniband/rdmasim0
check "rmmod_rdmasim_async_probe" rmmod rdmasim
