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
#   RSIM_PEER_SUITES   which of blktests, kselftest, rdma-core, perftest
#                      to run (rdma-core's and perftest's programs: the
#                      build that RSIM_RDMA_CORE_ENV names)
#   RSIM_BLKTESTS      the patched blktests tree (scripts/peers.sh made it)
#   RSIM_BLKTESTS_RUN  the tests or groups given to blktests' ./check
#   RSIM_NVME_IMG_SIZE blktests' NVME_IMG_SIZE
#   RSIM_NVMET_BLKDEV_TYPES  blktests' NVMET_BLKDEV_TYPES
#   RSIM_BLKTESTS_ROUNDS     how many times to run them (default 1)
#   RSIM_KSELFTEST     the kernel's tools/testing/selftests/rdma, with the
#                      link type a variable, installed as kselftest
#                      installs it (scripts/peers.sh made it)
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
	# (bash's process substitution), /dev/stdout and the others
	# (kselftest's runner writes each test's output there: without the
	# link it would fill a file of that name), configfs (nvmet, LIO)
	[ -e /dev/fd ] || ln -s /proc/self/fd /dev/fd
	for i in 0:stdin 1:stdout 2:stderr; do
		[ -e "/dev/${i#*:}" ] || ln -s "/proc/self/fd/${i%:*}" "/dev/${i#*:}"
	done
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
	peer_cpu
	peer_busy0=$peer_busy peer_idle0=$peer_idle
	say "RSIM-PEER begin $1 dev=$RSIM_PEER_DEV"
}

# the end line also gives the seconds the boot's CPU was busy and idle
# during the suite: a suite that waits (its own sleeps, timers, a peer
# that answers late) has a wall time its device cannot shorten, and the
# table's profile says how much
peer_suite_end() {
	uptime_s
	peer_cpu
	say "RSIM-PEER end $1 dev=$RSIM_PEER_DEV wall=$((up - peer_t0))" \
		"busy=$(((peer_busy - peer_busy0) / 100))" \
		"idle=$(((peer_idle - peer_idle0) / 100))"
}

# peer_cpu: the CPU's busy and idle ticks since boot (/proc/stat's first
# line, USER_HZ 100): busy is user, nice, system, irq, softirq and steal,
# idle is idle and iowait
peer_cpu() {
	local u n s i w q sq st rest
	read -r _ u n s i w q sq st rest </proc/stat
	peer_busy=$((u + n + s + q + sq + st))
	peer_idle=$((i + w))
}

# blktests: the nvme group over NVMe/RDMA on IPv6 link-local addresses,
# both namespace kinds, and the srp group, on $RSIM_PEER_DEV (loop: the
# nvme tests over NVMe's loop transport, no RDMA; the host asks for them only);
# RSIM_BLKTESTS_ROUNDS times in a row (make peers' PEERS_BLKTESTS_ROUNDS:
# its repeatability), round 1 in blktests/, round N in blktests.roundN/.
# Each round's results (blktests' own files, and ./check's output in
# check.log: a skip's reasons are only there) are written to ext4 (a
# file namespace needs O_DIRECT, which hostfs has not; see
# peer_results_fs) and copied out when it ends.
peer_blktests() {
	local fs=/run/blktests-results use='' r=1 name
	case $RSIM_PEER_DEV in
	rxe) use="USE_RXE=1" ;;
	rdmasim) use="USE_RDMASIM=1" ;;
	loop) use="NVMET_TRTYPES=loop" ;;
	esac
	check "blktests_results_fs" peer_results_fs $fs
	while [ $r -le "${RSIM_BLKTESTS_ROUNDS:-1}" ]; do
		name=blktests
		[ $r = 1 ] || name=blktests.round$r
		peer_blktests_round $name "$fs/$name" "$use"
		r=$((r + 1))
	done
}

# peer_blktests_round name dir use: one run of ./check, its results in
# dir, copied to $peer_out/name, then removed
peer_blktests_round() {
	local out="$2" run bd
	mkdir -p "$out"
	peer_suite_begin "$1"
	run=$(echo "$RSIM_BLKTESTS_RUN" | tr , ' ')
	bd=$(echo "${RSIM_NVMET_BLKDEV_TYPES:-device,file}" | tr , ' ')
	# shellcheck disable=SC2086 # the list of tests: words on purpose
	(cd "$RSIM_BLKTESTS" &&
		env NVMET_TRTYPES=rdma $3 NVMET_BLKDEV_TYPES="$bd" \
			nvme_adrfam=ipv6 NVME_IMG_SIZE="${RSIM_NVME_IMG_SIZE:-350m}" \
			./check -o "$out" $run) 2>&1 | tee "$out/check.log" >/dev/console
	peer_suite_end "$1"
	mkdir -p "$peer_out/$1"
	# the results less the tests' scratch directories (tmpdir.*)
	(cd "$out" && find . -name 'tmpdir.*' -prune -o -type f -print |
		cpio -pdm --quiet "$peer_out/$1")
	check "${1}_results_copied" sh -c "ls -d $peer_out/$1/nodev*"
	rm -rf "$out"
}

# peer_forks: the processes started since boot (/proc/stat)
peer_forks() {
	local k v
	while read -r k v; do
		[ "$k" = processes ] && echo "$v" && return
	done </proc/stat
}

# kselftest: the kernel's rdma selftests, each run by kselftest's own
# run_kselftest.sh (TAP on stdout, kept in kselftest/<test>.tap) with the
# link type and module of $RSIM_PEER_DEV, one at a time so that each has
# its seconds and the processes it started (kselftest/seconds: the test,
# /proc/uptime before and after, /proc/stat's "processes" before and
# after: what these scripts' time goes to under UML), with a timeout of
# 600 s instead of kselftest's 45 (the debug kernel: rxe_netns_names.sh
# takes 230 to 310 s on every device; the table's notes say so). Those
# that scripts/peers/kselftest-rdma.notrun names are not run; the table
# gives its reason.
peer_kselftest() {
	local t t0 t1 p0 p1 rest out=$peer_out/kselftest
	local notrun="$RSIM_TOP/scripts/peers/kselftest-rdma.notrun"
	mkdir -p "$out"
	: >"$out/seconds"
	peer_suite_begin kselftest
	while IFS= read -r t; do
		if grep -q "^$t	" "$notrun"; then
			continue
		fi
		say "RSIM-PEER kselftest $t"
		read -r t0 rest </proc/uptime
		p0=$(peer_forks)
		(cd "$RSIM_KSELFTEST" &&
			env RDMA_LINK_TYPE="$RSIM_PEER_DEV" RDMA_LINK_MODULE="$(peer_module)" \
				./run_kselftest.sh --override-timeout 600 -t "$t") 2>&1 |
			tee "$out/${t#*:}.tap" >/dev/console
		read -r t1 rest </proc/uptime
		p1=$(peer_forks)
		echo "$t $t0 $t1 $p0 $p1" >>"$out/seconds"
	done <"$RSIM_KSELFTEST/kselftest-list.txt"
	peer_suite_end kselftest
	cp "$RSIM_KSELFTEST/kselftest-list.txt" "$out/"
}

# peer_link_up name [netdev] / peer_link_down name: a device of
# $RSIM_PEER_DEV on rsim_pv0 (or netdev) as a user makes one (rdma link
# add), its port ACTIVE and, for RoCE (rdmasim, rxe), its link-local RoCE
# v2 GID in place; then gone with its module
peer_link_up() {
	modprobe "$(peer_module)" &&
		rdma link add "$1" type "$RSIM_PEER_DEV" netdev "${2:-rsim_pv0}" &&
		wait_for "$1's port to be ACTIVE" 60 port_active "$1" || return 1
	[ "$RSIM_PEER_DEV" = siw ] ||
		wait_for "$1's RoCE v2 GID" 60 roce_v2_gid "$1"
}

peer_link_down() {
	rdma link del "$1" && modprobe -r "$(peer_module)"
}

# rdma-core: its own tests (tests/, pyverbs, rdma-core 65 as make check
# builds it) on one device of $RSIM_PEER_DEV on rsim_pv0, so that the
# rdma_cm tests find its link-local address; guest/rdma-core-tests.sh runs
# them and prints one RSIM-RDMACORE line per test to the console, which
# the table reads (the seconds between two lines are a test's)
peer_rdma_core() {
	local dev="${RSIM_PEER_DEV}_pv0"
	check "rdma_core_${dev}_up" peer_link_up "$dev" || return 0
	peer_suite_begin rdma-core
	RSIM_RDMA_CORE_DEVS=$dev
	# some tests only (PEERS_RDMA_CORE_TESTS: patterns, commas here)
	RSIM_RDMA_CORE_TESTS=$(echo "${RSIM_RDMA_CORE_TESTS:-}" | tr , ' ')
	export RSIM_RDMA_CORE_TESTS
	# shellcheck source=rdma-core-tests.sh
	. "$RSIM_TOP/scripts/guest/rdma-core-tests.sh"
	peer_suite_end rdma-core
	check "rdma_core_${dev}_down" peer_link_down "$dev"
}

# perftest: each program make check builds, server and client on one
# device of $RSIM_PEER_DEV, both on CPU 0 (the boot's only one), 1000
# iterations, as its users run it. rdmasim and rxe on rsim_pv0 through
# perftest's own run_perftest_loopback (the client connects to
# "localhost"; the two exchange their QPs' numbers over TCP). siw, an
# iWARP device, connects through rdma_cm only (-R), which binds
# "localhost" to the device that owns 127.0.0.1, none on a veth end and
# siw's zero-GID lo device no one (Documentation/testing.rst): siw_pv0's
# server listens on every address (--ipv6-addr: the rdma_cm address is
# IPv6) and its client connects to rsim_pv0's link-local address, the one
# of siw_pv0's netdev (what run_perftest_loopback does, with the listen
# awaited instead of a second's sleep). perftest 25.01 has no
# --data_validation: a program passes when it (its client) exits 0. Each
# program's output goes to perftest/<program>.out (siw's server's after
# its client's), and a line to perftest/results: the program, its exit
# status, /proc/uptime before and after.
PERFTEST_PORT=18515
peer_perftest_cm() {
	local bin="$1" out="$2" srv rc
	ll_of rsim_pv0 || return 1
	timeout 120 taskset -c 0 "$bin" -d siw_pv0 -F -n 1000 -R --ipv6-addr \
		>"$out.server" 2>&1 &
	srv=$!
	if ! wait_for "$bin's rdma_cm listen" 30 cm_listening $PERFTEST_PORT \
		>"$out" 2>&1; then
		kill "$srv" 2>/dev/null
		wait "$srv"
		cat "$out.server" >>"$out"
		return 1
	fi
	# shellcheck disable=SC2154 # val: ll_of()'s (guest/lib.sh)
	timeout 120 taskset -c 0 "$bin" -d siw_pv0 -F -n 1000 -R --ipv6-addr \
		"$val%rsim_pv0" >"$out" 2>&1
	rc=$?
	wait "$srv"
	{ echo "---- the server's output ----"; cat "$out.server"; } >>"$out"
	rm -f "$out.server"
	return $rc
}

peer_perftest() {
	local dev="${RSIM_PEER_DEV}_pv0" out=$peer_out/perftest p rc t0 t1 rest
	local loop
	mkdir -p "$out"
	: >"$out/results"
	check "perftest_cpu_mhz" cpuinfo_mhz
	check "perftest_${dev}_up" peer_link_up "$dev" || return 0
	# after the device: rdmasim's provider where its module is loaded
	check "perftest_rdma_core_env" rdma_core_env
	loop="${RSIM_RDMA_CORE_PERFTEST%/build}/src/run_perftest_loopback"
	peer_suite_begin perftest
	for p in ib_write_bw ib_read_bw ib_send_bw ib_write_lat ib_send_lat; do
		say "RSIM-PEER perftest $p"
		read -r t0 rest </proc/uptime
		if [ "$RSIM_PEER_DEV" = siw ]; then
			peer_perftest_cm "$RSIM_RDMA_CORE_PERFTEST/$p" "$out/$p.out"
		else
			timeout 120 sh "$loop" 0 0 "$RSIM_RDMA_CORE_PERFTEST/$p" \
				-d "$dev" -F -n 1000 >"$out/$p.out" 2>&1
		fi
		rc=$?
		read -r t1 rest </proc/uptime
		echo "$p $rc $t0 $t1" >>"$out/results"
	done
	peer_suite_end perftest
	check "perftest_${dev}_down" peer_link_down "$dev"
}

peer_stage
case ",$RSIM_PEER_SUITES," in *,blktests,*) peer_blktests ;; esac
case ",$RSIM_PEER_SUITES," in *,rdma-core,*) peer_rdma_core ;; esac
case ",$RSIM_PEER_SUITES," in *,perftest,*) peer_perftest ;; esac
# last: it switches the RDMA core to exclusive netns mode and back and
# moves devices between namespaces, which no other suite should inherit
# (in one run, rdma-core's tests on rxe after it failed to resolve
# addresses, ETIMEDOUT creating AHs; a boot of its own did not repeat it)
case ",$RSIM_PEER_SUITES," in *,kselftest,*) peer_kselftest ;; esac
