# SPDX-License-Identifier: GPL-2.0-only
# shellcheck shell=bash
# rdmasim: shared shell helpers, sourced by the other scripts. Defines
# RSIM_TOP, RSIM_CACHE, RSIM_OUT, RSIM_T0 (exported), SUDO, RSIM_APT_DIR,
# RSIM_SUMMARY and the functions below; the scripts that source it say what they use.

RSIM_TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
RSIM_CACHE=${RSIM_CACHE:-/var/cache/rdmasim}
RSIM_OUT=${RSIM_OUT:-$RSIM_TOP/out}
RSIM_T0=${RSIM_T0:-$(date +%s)}
export RSIM_T0

if [ "$(id -u)" -eq 0 ]; then SUDO=; else SUDO=sudo; fi

# stage "text": a progress line with the time since the run began
stage() {
	local now s
	now=$(date +%s)
	s=$((now - RSIM_T0))
	printf '[%02d:%02d] == %s\n' $((s / 60)) $((s % 60)) "$*"
}

die() {
	echo "rdmasim: error: $*" >&2
	exit 1
}

# run_with_ticker "label" cmd...: run a long command with its output in a
# log file and a progress line every minute; the log's tail on failure.
run_with_ticker() {
	local label=$1 log=$2
	shift 2
	"$@" >"$log" 2>&1 &
	local pid=$! start
	start=$(date +%s)
	while kill -0 "$pid" 2>/dev/null; do
		sleep 5
		local el=$(( $(date +%s) - start ))
		if [ $((el % 60)) -lt 5 ] && [ "$el" -ge 60 ]; then
			stage "$label: $((el / 60)) min, $(grep -c '^  [A-Z]' "$log") steps"
		fi
	done
	if ! wait "$pid"; then
		tail -40 "$log" >&2
		die "$label failed (log: $log)"
	fi
}

# The Debian mirror this machine already uses, so that no host name is
# written in this repository. RSIM_DEBIAN_MIRROR overrides it.
debian_mirror() {
	if [ -n "${RSIM_DEBIAN_MIRROR:-}" ]; then
		echo "$RSIM_DEBIAN_MIRROR"
		return
	fi
	local m
	m=$(cat /etc/apt/sources.list.d/*.sources 2>/dev/null |
	    awk '/^URIs:/ { for (i = 2; i <= NF; i++) print $i }' |
	    grep -v security | head -1)
	[ -n "$m" ] || m=$(cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null |
		awk '$1 == "deb" { for (i = 2; i <= NF; i++) if ($i ~ /^(https?|file):/) { print $i; break } }' |
		grep -v security | head -1)
	[ -n "$m" ] || die "no Debian mirror in /etc/apt; set RSIM_DEBIAN_MIRROR"
	echo "$m"
}

# A private apt configuration (sources list and lists directory under the
# cache) that never touches the machine's own apt sources.
#   rsim_apt_opts [name]: apt-get options for the configuration <name>
#   rsim_apt_update name "line"...: write its sources list and update it
RSIM_APT_DIR=$RSIM_CACHE/apt
rsim_apt_opts() {
	local d=$RSIM_APT_DIR/${1:-kernel}
	echo "-o Dir::Etc::SourceList=$d/sources.list" \
	     "-o Dir::Etc::SourceParts=/dev/null" \
	     "-o Dir::State::Lists=$d/lists" \
	     "-o Dir::Cache::Archives=$d/archives" \
	     "-o APT::Sandbox::User=root"
}

# A configuration updated once in a run is not updated again, in this
# script or the ones it starts (RSIM_APT_FRESH, exported, lists them):
# make check's background jobs must not run apt-get update on a list
# directory the others read.
rsim_apt_update() {
	local name=$1 d=$RSIM_APT_DIR/$1 mirror line
	shift
	case " ${RSIM_APT_FRESH:-} " in *" $name "*) return ;; esac
	mirror=$(debian_mirror)
	$SUDO mkdir -p "$d/lists/partial" "$d/archives/partial"
	for line in "$@"; do
		# "deb trixie main" -> "deb [signed-by=...] <mirror> trixie main"
		echo "${line%% *} [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $mirror ${line#* }"
	done | $SUDO tee "$d/sources.list" >/dev/null
	# two make runs at once update one list in turn (apt-get takes its
	# lists' lock without waiting)
	# shellcheck disable=SC2046
	$SUDO flock -w 600 "$d/update.lock" \
		apt-get -q $(rsim_apt_opts "$name") update >/dev/null ||
		die "apt-get update ($name list) failed"
	RSIM_APT_FRESH="${RSIM_APT_FRESH:-} $name"
	export RSIM_APT_FRESH
}

# rsim_apt_get args...: apt-get, non-interactive, waiting (at most ten
# minutes) for dpkg's lock while another of make check's jobs holds it
rsim_apt_get() {
	DEBIAN_FRONTEND=noninteractive $SUDO apt-get -q -o DPkg::Lock::Timeout=600 "$@"
}

# rsim_lock <name>: an exclusive lock (flock) on $RSIM_CACHE/locks/<name>,
# held by this shell until rsim_unlock or its exit. Two jobs that want the
# same cached tree (two make runs at once, or two jobs of one) make it
# once: the second waits, then finds it complete. One lock at a time;
# never held across a job started in the background (the job would
# inherit it).
rsim_lock() {
	local d=$RSIM_CACHE/locks
	[ -d "$d" ] || { $SUDO mkdir -p "$d" && $SUDO chmod 1777 "$d"; }
	exec {RSIM_LOCK_FD}>>"$d/$1"
	flock "$RSIM_LOCK_FD"
}

rsim_unlock() {
	exec {RSIM_LOCK_FD}>&-
}

# The Debian suites the kernel sources and headers come from.
rsim_apt_update_kernel() {
	rsim_apt_update kernel "deb trixie main" "deb trixie-backports main" \
		"deb bookworm main"
}

# rsim_sid_source pkg: the upstream tarball of Debian sid's newest <pkg>
# source (apt checks it against the signed lists' checksums; the Debian
# packaging is not needed), unpacked into a new temporary directory.
# Prints "<version> <tree>"; the caller removes the tree's parent.
rsim_sid_source() {
	local pkg=$1 ver tmp dir
	rsim_apt_update sparse "deb-src sid main" >&2
	# shellcheck disable=SC2046
	ver=$(apt-cache $(rsim_apt_opts sparse) showsrc "$pkg" |
	      awk '/^Version:/ { print $2 }' | sort -V | tail -1)
	[ -n "$ver" ] || die "no $pkg source package in Debian's lists"
	tmp=$(mktemp -d)
	# shellcheck disable=SC2046
	(cd "$tmp" && apt-get -q $(rsim_apt_opts sparse) source \
		--download-only --tar-only "$pkg=$ver" >/dev/null 2>&1) ||
		die "fetching $pkg $ver failed"
	tar -C "$tmp" -xf "$tmp/${pkg}_"*.orig.tar.*
	# shellcheck disable=SC2012 # the one directory the tarball holds
	dir=$(ls -d "$tmp/$pkg"-*/ | head -1)
	echo "$ver ${dir%/}"
}

# sparse: the kernel (7.x) needs __typeof_unqual__, which Debian 12's
# sparse 0.6.4 lacks; build Debian's newer sparse source once. Called as
# $(rsim_sparse): prints the program's path.
rsim_sparse() {
	local ver dir src
	rsim_lock sparse	# released when the $(rsim_sparse) subshell ends
	# shellcheck disable=SC2012 # our own directory names, sorted
	dir=$(ls -d "$RSIM_CACHE"/tools/sparse-*/ 2>/dev/null | tail -1)
	if [ -n "$dir" ] && [ -x "$dir/sparse" ]; then
		echo "${dir%/}/sparse"
		return
	fi
	src=$(rsim_sid_source sparse) || exit 1
	ver=${src%% *} dir=${src#* }
	make -s -C "$dir" -j"$(nproc)" sparse >/dev/null 2>&1 || die "building sparse failed"
	$SUDO mkdir -p "$RSIM_CACHE/tools"
	$SUDO rm -rf "$RSIM_CACHE/tools/sparse-$ver"
	$SUDO mv "$dir" "$RSIM_CACHE/tools/sparse-$ver"
	rm -rf "${dir%/*}"
	echo "$RSIM_CACHE/tools/sparse-$ver/sparse"
}

# ibsim: its own tests (subnet_discover, query_many, mcast_storm), which
# make fabric builds unmodified and runs on rdmasim's fabric. Debian's
# ibsim source package (0.12, upstream's commit db9c0e4) is fetched once
# and unpacked under the cache; IBSIM=<your tree> takes its place. Called
# as $(rsim_ibsim): prints the tree's path.
rsim_ibsim() {
	local ver dir src
	if [ -n "${IBSIM:-}" ]; then
		[ -d "$IBSIM/tests" ] || die "IBSIM=$IBSIM has no tests/"
		echo "$IBSIM"
		return
	fi
	rsim_lock ibsim		# released when the $(rsim_ibsim) subshell ends
	# shellcheck disable=SC2012 # our own directory names, sorted
	dir=$(ls -d "$RSIM_CACHE"/src/ibsim-*/ 2>/dev/null | tail -1)
	if [ -n "$dir" ] && [ -d "$dir/tests" ]; then
		echo "${dir%/}"
		return
	fi
	src=$(rsim_sid_source ibsim) || exit 1
	ver=${src%% *} dir=${src#* }
	[ -d "$dir/tests" ] || die "ibsim $ver has no tests/"
	$SUDO mkdir -p "$RSIM_CACHE/src"
	$SUDO rm -rf "$RSIM_CACHE/src/ibsim-${ver%-*}"
	$SUDO mv "$dir" "$RSIM_CACHE/src/ibsim-${ver%-*}"
	rm -rf "${dir%/*}"
	echo "$RSIM_CACHE/src/ibsim-${ver%-*}"
}

# make check's summary: one line per part, "label<TAB>PASS|FAIL<TAB>what
# was counted<TAB>seconds" in $RSIM_SUMMARY (judge-log.py and
# judge-rdma-core.py write theirs with --summary), printed at the end.
#   rsim_summary_add label PASS|FAIL "counts" [seconds]
#   rsim_step label cmd...: run cmd, add its line (its time, PASS or
#	FAIL), return its status
#   rsim_summary_print [status]: the table, and whether every part passed;
#	a non-zero <status> (the script's exit status, from its EXIT trap)
#	fails the run even when every part it got to passed
RSIM_SUMMARY=${RSIM_SUMMARY:-$RSIM_OUT/summary.tsv}
rsim_summary_add() {
	printf '%s\t%s\t%s\t%s\n' "$1" "$2" "${3:-}" "${4:-}" >>"$RSIM_SUMMARY"
}

# rsim_thp_always: transparent huge pages for every process (not only
# those that ask with madvise) while make check runs; rsim_thp_restore
# puts the machine's setting back. The compilers' heaps then take far
# fewer page faults and TLB misses: a kernel directory compiled 17 to 25 %
# faster (Documentation/testing.rst, "Issue 19"). Only as root, only where
# the setting exists, and never with RSIM_THP=0.
RSIM_THP_FILE=/sys/kernel/mm/transparent_hugepage/enabled
RSIM_THP_WAS=''
rsim_thp_always() {
	local cur
	[ "${RSIM_THP:-1}" != 0 ] && [ "$(id -u)" = 0 ] && [ -w "$RSIM_THP_FILE" ] ||
		return 0
	cur=$(sed -n 's/.*\[\(.*\)\].*/\1/p' "$RSIM_THP_FILE")
	[ -n "$cur" ] && [ "$cur" != always ] || return 0
	echo always >"$RSIM_THP_FILE" || return 0
	RSIM_THP_WAS=$cur
	stage "transparent huge pages: always while this runs (was $cur)"
}

rsim_thp_restore() {
	[ -n "$RSIM_THP_WAS" ] || return 0
	echo "$RSIM_THP_WAS" >"$RSIM_THP_FILE" || true
	RSIM_THP_WAS=''
}

rsim_step() {
	local label=$1 t0 rc=0
	shift
	t0=$(date +%s)
	"$@" || rc=$?
	rsim_summary_add "$label" "$([ $rc = 0 ] && echo PASS || echo FAIL)" "" \
		$(( $(date +%s) - t0 ))
	return $rc
}

rsim_summary_print() {
	local rc=${1:-0} now s
	[ -f "$RSIM_SUMMARY" ] || return 0
	now=$(date +%s)
	s=$((now - RSIM_T0))
	echo
	awk -F '\t' -v total="$s" -v rc="$rc" '
		BEGIN { printf "%-30s %-6s %6s  %s\n", "part", "result", "min", "what ran" }
		{
			t = $4 == "" ? "" : sprintf("%.1f", $4 / 60)
			printf "%-30s %-6s %6s  %s\n", $1, $2, t, $3
			n++
			if ($2 != "PASS") bad++
		}
		END {
			# a stage that died (a build, a setup step) before its part
			# was judged
			if (rc != 0) {
				printf "%-30s %-6s %6s  %s\n", "(stopped)", "FAIL", "",
					"exit status " rc ": see the error above"
				n++
				bad++
			}
			printf "%s: %d parts, %s, in %d min %d s\n",
				bad ? "make check FAILED" : "make check passed", n,
				bad ? bad " failed" : "all passed", total / 60, total % 60
			# the plain closing line a CI reads
			printf "parts: %d passed, %d failed\n", n - bad, bad
		}' "$RSIM_SUMMARY"
}

# kernel_version <source dir>: "7.3.4" from its Makefile
kernel_version() {
	awk '/^VERSION =/ { v = $3 } /^PATCHLEVEL =/ { p = $3 }
	     /^SUBLEVEL =/ { s = $3 } END { print v "." p "." s }' "$1/Makefile"
}
