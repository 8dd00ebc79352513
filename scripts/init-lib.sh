# SPDX-License-Identifier: GPL-2.0-only
# shellcheck shell=sh
#
# rdmasim: the helpers of a test kernel's init, in POSIX sh (busybox's
# too): scripts/uml-init.sh (UML, the host's bash) and
# scripts/stock-init.sh (the stock kernel's initramfs, busybox) source it.
# Their output is the console protocol of Documentation/testing.rst ("The
# console protocol"), which scripts/check-run.py judges. Uses KMEMLEAK (a
# path, writable when the kernel has kmemleak) and counts in n and fails;
# scratch files go to /run.

n=0
fails=0

say() {
	echo "$*" >/dev/kmsg
}

# check "name" cmd...: one line of the shell selftest's own results
check() {
	local name="$1"
	shift
	n=$((n + 1))
	if "$@" >/run/check.out 2>&1; then
		say "RSIM-SELFTEST ok $n $name"
	else
		say "RSIM-SELFTEST not ok $n $name"
		while IFS= read -r l; do
			say "RSIM-SELFTEST #   $l"
		done </run/check.out
		fails=$((fails + 1))
	fi
}

# Every program started in the UML kernel costs about half a second (a
# fork alone a quarter): the checks use shell builtins where they can.
#   capture file cmd...: run cmd once, its output to <file> and the console
#   has_line file pattern: a line of <file> matches the shell <pattern>
capture() {
	local f="$1" rc=0 l
	shift
	"$@" >"$f" 2>&1 || rc=$?
	while IFS= read -r l; do echo "$l"; done <"$f" >/dev/console
	return $rc
}

has_line() {
	local l
	while IFS= read -r l; do
		# shellcheck disable=SC2254 # a pattern on purpose
		case $l in $2) return 0 ;; esac
	done <"$1"
	echo "$1: no line matches '$2'"
	return 1
}

# part name: where each part of the run begins (the time profile)
part() {
	say "RSIM-PART $1"
}

finish() {
	part finish
	# objects must be older than kmemleak's minimum age to be reported
	if [ -w "$KMEMLEAK" ]; then
		sleep 6
		echo scan >"$KMEMLEAK"
		echo scan >"$KMEMLEAK"
		say "RSIM-KMEMLEAK-BEGIN"
		while IFS= read -r l; do echo "$l"; done <"$KMEMLEAK" >/dev/console
		say "RSIM-KMEMLEAK-END"
	fi
	say "RSIM-SELFTEST 1..$n"
	say "RSIM-DONE fails=$fails"
	echo o >/proc/sysrq-trigger
	sleep 10
}

# sysfs_is file value: the attribute reads exactly <value>
sysfs_is() {
	local v
	read -r v <"$1" || { echo "$1: unreadable"; return 1; }
	[ "$v" = "$2" ] || { echo "$1: '$v' != '$2'"; return 1; }
}

# field file name: the value of a "Name:....value" line of smpquery in $val
field() {
	local l
	while IFS= read -r l; do
		case $l in
		"$2:"*)
			val=${l#"$2:"}
			while [ "${val#.}" != "$val" ]; do val=${val#.}; done
			return 0
			;;
		esac
	done <"$1"
	val=
	echo "$1: no $2"
	return 1
}

