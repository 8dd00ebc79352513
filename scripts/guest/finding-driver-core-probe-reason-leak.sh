# shellcheck shell=sh
# SPDX-License-Identifier: GPL-2.0-only
#
# rdmasim: the reproducer of a finding (Documentation/ulps.rst, "Findings"):
# on 7.3, a driver's asynchronous attach that finds a device not yet ready
# to probe (__driver_probe_device(): dev_err_probe(dev, -EPROBE_DEFER,
# "Device not ready to probe")) leaks the deferred-probe reason string.
# dev_err_probe() stores it in dev->p->deferred_probe_reason, but the
# device is not put on the deferred list (dev_can_match() is still false,
# on purpose: device_add() probes it again), and the reason is freed only
# by driver_deferred_probe_del() for a device on that list, or when a new
# reason replaces it. Found by make peers: blktests' nvme/065 loads
# scsi_debug, sd_mod's attach raced the disk's device_add(), and the next
# test's kmemleak scan failed it. Here scsi_debug is loaded with sd_mod
# unloaded and udev running, again and again, and kmemleak is scanned. Run it with
#
#   make script SCRIPT=scripts/guest/finding-driver-core-probe-reason-leak.sh \
#     RSIM_UML_ARGS="RSIM_PEERS=0 RSIM_RDMASIM=0"
#
# which fails, on the kmemleak check, while the finding stands (the race
# needs sd's attach to meet the disk between its uevent and the end of
# device_add(): not every boot hits it in the rounds given).

mp() { modprobe -d "$RSIM_MODROOT" -S "$RSIM_KVER" "$@"; }

# udev, as in make peers' boots: it loads sd_mod for the disk's modalias
# as soon as the disk's uevent goes out, inside device_add()
mount --bind "$RSIM_MODROOT/lib/modules" /lib/modules 2>/dev/null
/lib/systemd/systemd-udevd --daemon --resolve-names=never

# race_round: scsi_debug's disk added with sd_mod not loaded: udev's
# modprobe registers sd's driver while the disk's device_add() goes on
race_round() {
	mp -r sd_mod
	mp scsi_debug dev_size_mb=1
	udevadm settle --timeout=30
	mp -r scsi_debug
}

i=0
while [ $i -lt "${RSIM_RACE_ROUNDS:-40}" ]; do
	race_round 2>/dev/null
	i=$((i + 1))
done

# probe_reason_leaks: kmemleak's unreferenced objects holding the reason
probe_reason_leaks() {
	# two scans, as init's own: a first one can still see a stale pointer
	sleep 6
	echo scan >"$KMEMLEAK"
	sleep 6
	echo scan >"$KMEMLEAK"
	if grep -B6 -A12 "ready to probe" "$KMEMLEAK"; then
		return 1
	fi
	return 0
}
check "no_deferred_probe_reason_leaked" probe_reason_leaks
