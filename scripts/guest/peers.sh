# shellcheck shell=sh
# SPDX-License-Identifier: GPL-2.0-only
#
# rdmasim: the outside suites in one boot, on one kind of soft RDMA device
# (scripts/peers.sh, make peers; make check's subset): init-uml.sh's
# "peers" part sources it. From the kernel command line (init's
# environment; lists take commas for spaces):
#   RSIM_PEER_DEV      rdmasim, siw or rxe: the device type every suite uses
#   RSIM_PEER_OUT      a host directory, mounted read-write here: the
#                      suites' own result files go there
#   RSIM_PEER_MODULES  a host directory holding lib/modules/<kver> with
#                      rdmasim.ko among the kernel's modules (depmod run):
#                      bind-mounted on /lib/modules, so that the suites'
#                      plain modprobe and modinfo find every module
#   RSIM_PEER_SUITES   which of blktests, kselftest to run
#   RSIM_BLKTESTS      the patched blktests tree (scripts/peers.sh made it)
#   RSIM_BLKTESTS_RUN  the tests or groups given to blktests' ./check
#   RSIM_NVME_IMG_SIZE blktests' NVME_IMG_SIZE
#   RSIM_NVMET_BLKDEV_TYPES  blktests' NVMET_BLKDEV_TYPES
#   RSIM_KSELFTEST     the kernel's tools/testing/selftests/rdma, with the
#                      link type changed (scripts/peers.sh made it)
# Each suite runs as its users run it; this script only sets the stage:
# an Ethernet pair with IPv6 link-local addresses for the soft devices to
# bind to, modules where modprobe looks, kmemleak cleared of what the boot
# made. Its RSIM-PEER lines (begin, end and wall time of each suite) go to
# the console; scripts/peers-table.py reads them with the suites' files.

peer_out=/run/peer-out

peer_stage() {
	local kver
	read -r kver </proc/sys/kernel/osrelease
	# what a distribution's boot sets up and the suites expect: /dev/fd
	# (bash's process substitution), configfs (nvmet, LIO)
	[ -e /dev/fd ] || ln -s /proc/self/fd /dev/fd
	check "peer_configfs" mount -t configfs none /sys/kernel/config
	mkdir -p $peer_out
	check "peer_out_mounted" mount -t hostfs none $peer_out -o "$RSIM_PEER_OUT"
	# the host's / is read-only; what the suites write gets a tmpfs over
	# it: /etc (multipath.conf and its wwids, LIO's /etc/target, nvme-cli's
	# keys), /usr/lib (/lib/modules), /mnt (blktests mounts its XFS on
	# /mnt/blktests), /tmp and /var
	for d in etc usr/lib mnt tmp var; do
		check "peer_overlay_$d" peer_overlay "/$d" "$(echo $d | tr / _)"
	done
	check "peer_modules_mounted" peer_modules
	# udev, as on the systems blktests runs on: the srp group finds its
	# multipath devices by /dev/disk/by-id, and multipathd its paths
	check "peer_udevd" peer_udevd
	check "peer_modinfo_${RSIM_PEER_DEV}" modinfo "$(peer_module)"
	check "peer_modules_of_$kver" test -d "/lib/modules/$kver/kernel"
	# an Ethernet pair for start_soft_rdma() (every interface with a
	# carrier); link-local addresses only, usable at once (no DAD)
	ip link set lo up
	ip link add rsim_pv0 type veth peer name rsim_pv1
	for i in rsim_pv0 rsim_pv1; do
		echo 0 >/proc/sys/net/ipv6/conf/$i/accept_dad
		ip link set $i up
	done
	for i in rsim_pv0 rsim_pv1; do
		check "peer_${i}_link_local" \
			wait_for "$i's IPv6 link-local address" 60 ll_addr_ready $i
	done
	peer_kmemleak_clear
}

# peer_overlay dir name: a writable overlay (upper layer on tmpfs) on dir
peer_overlay() {
	local w="/run/overlay/$2"
	mkdir -p "$w/upper" "$w/work" &&
		mount -t overlay overlay \
			-o "lowerdir=$1,upperdir=$w/upper,workdir=$w/work" "$1"
}

# the suites' modules (the kernel's and rdmasim.ko) where modprobe,
# modinfo and blktests look
peer_modules() {
	mkdir -p /lib/modules &&
		mount --bind "$RSIM_PEER_MODULES/lib/modules" /lib/modules
}

# peer_udevd: the host's systemd-udevd and rules, every device added
peer_udevd() {
	/lib/systemd/systemd-udevd --daemon --resolve-names=never &&
		udevadm trigger --action=add &&
		udevadm settle --timeout=60
}

# peer_results_fs dir: an ext4 file system on dir, as blktests' results
# directory usually is (where the nvme tests keep their namespaces' files):
# a loop device over a 1.5 GiB file on tmpfs. tmpfs itself would do
# (O_DIRECT) but for FALLOC_FL_ZERO_RANGE, which nvmet's file backend and
# the loop driver need for Write Zeroes: without it the host falls back
# to writing ZERO_PAGE (Documentation/ulps.rst, Findings).
peer_results_fs() {
	local dev
	modprobe loop &&
		mkdir -p /run/results-img "$1" &&
		truncate -s 1536M /run/results-img/ext4 &&
		mkfs.ext4 -q /run/results-img/ext4 &&
		dev=$(losetup -f --show /run/results-img/ext4) &&
		mount -t ext4 "$dev" "$1"
}

peer_module() {
	case $RSIM_PEER_DEV in
	rxe) echo rdma_rxe ;;
	*) echo "$RSIM_PEER_DEV" ;;
	esac
}

# Boot noise is not a result: kmemleak reports an object only once it is
# 5 s old (MSECS_MIN_AGE), so one made late in the boot would be charged
# to a suite's first test. Wait until everything so far is old enough,
# scan, and clear what the scan found (kept in kmemleak-boot.txt, its
# count on the console: the table's notes say it).
peer_kmemleak_clear() {
	[ -w "$KMEMLEAK" ] || return 0
	local n=0 l
	sleep 6
	echo scan >"$KMEMLEAK"
	while IFS= read -r l; do
		echo "$l"
		case $l in "unreferenced object"*) n=$((n + 1)) ;; esac
	done <"$KMEMLEAK" >$peer_out/kmemleak-boot.txt
	echo clear >"$KMEMLEAK"
	say "RSIM-PEER kmemleak-before-suites objects=$n (cleared; $RSIM_PEER_OUT/kmemleak-boot.txt)"
}

# peer_suite_begin name / peer_suite_end name: the suite's wall time
# (uptime_s sets up)
# shellcheck disable=SC2154
peer_suite_begin() {
	uptime_s
	peer_t0=$up
	say "RSIM-PEER begin $1 dev=$RSIM_PEER_DEV"
}

peer_suite_end() {
	uptime_s
	say "RSIM-PEER end $1 dev=$RSIM_PEER_DEV wall=$((up - peer_t0))"
}

# blktests: the nvme group over NVMe/RDMA on IPv6 link-local addresses,
# both namespace kinds, and the srp group, on $RSIM_PEER_DEV. Its results
# (blktests' own files, and ./check's output in check.log: a skip's
# reasons are only there) are written to a tmpfs (a file namespace needs
# O_DIRECT, which hostfs has not) and copied out when it ends.
peer_blktests() {
	local out=/run/blktests-results use=
	case $RSIM_PEER_DEV in
	rxe) use="USE_RXE=1" ;;
	rdmasim) use="USE_RDMASIM=1" ;;
	esac
	check "blktests_results_fs" peer_results_fs $out
	peer_suite_begin blktests
	local run bd
	run=$(echo "$RSIM_BLKTESTS_RUN" | tr , ' ')
	bd=$(echo "${RSIM_NVMET_BLKDEV_TYPES:-device,file}" | tr , ' ')
	# shellcheck disable=SC2086 # the list of tests: words on purpose
	(cd "$RSIM_BLKTESTS" &&
		env $use NVMET_TRTYPES=rdma NVMET_BLKDEV_TYPES="$bd" \
			nvme_adrfam=ipv6 NVME_IMG_SIZE="${RSIM_NVME_IMG_SIZE:-350m}" \
			./check -o $out $run) 2>&1 | tee $out/check.log >/dev/console
	peer_suite_end blktests
	mkdir -p $peer_out/blktests
	# the results less the tests' scratch directories (tmpdir.*)
	(cd $out && find . -name 'tmpdir.*' -prune -o -type f -print |
		cpio -pdm --quiet $peer_out/blktests)
	check "blktests_results_copied" sh -c "ls -d $peer_out/blktests/nodev*"
}

peer_stage
case ",$RSIM_PEER_SUITES," in *,blktests,*) peer_blktests ;; esac
