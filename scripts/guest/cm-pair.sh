# shellcheck shell=sh
# SPDX-License-Identifier: GPL-2.0-only
#
# rdmasim: a pair of rdma_cm programs (a server and its client) as the
# selftest runs them, sourced by guest/selftest.sh for the RoCE stanza
# (guest/selftest-roce.sh) and IPoIB's (guest/selftest-ipoib.sh): the
# server started until it listens, the client run, both ending, each
# program's output on the console, the kernel stacks of one that hangs.
# Uses wait_for(), has_line(), say(), ll_of() and cm_listening() from
# guest/lib.sh.

# rdma_core_env: rdma-core's build (boot-uml.sh's RSIM_RDMA_CORE_ENV) and
# the provider for its programs, their directory in $CMB; false without it
rdma_core_env() {
	[ -n "${RSIM_RDMA_CORE_ENV:-}" ] && [ -f "$RSIM_RDMA_CORE_ENV" ] ||
		return 1
	# shellcheck disable=SC1090 # the build's
	. "$RSIM_RDMA_CORE_ENV"
	RDMAV_DRIVERS=$RSIM_MODDIR/tools/provider/librdmasim
	LD_LIBRARY_PATH=$RSIM_RDMA_CORE_LIB
	export RDMAV_DRIVERS LD_LIBRARY_PATH
	# shellcheck disable=SC2034 # the stanzas' that source this file
	CMB=$RSIM_RDMA_CORE_BIN
}

# ended pid: <pid> is gone
ended() {
	kill -0 "$1" 2>/dev/null && { echo "pid $1 still runs"; return 1; }
	return 0
}
# stacks_of pid: where the threads of <pid> and of its children
# (timeout's program) wait, kernel stacks and wchan, in /run/stacks
stacks_of() {
	local p t pp
	for p in /proc/[0-9]*; do
		pp=$(awk '/^PPid:/ { print $2 }' "$p/status" 2>/dev/null)
		[ "${p#/proc/}" = "$1" ] || [ "$pp" = "$1" ] || continue
		for t in "$p"/task/*; do
			echo "pid ${p#/proc/} thread ${t##*/}:" \
				"$(cat "$t/comm" 2>/dev/null)" \
				"wchan $(cat "$t/wchan" 2>/dev/null)"
			cat "$t/stack" 2>/dev/null
		done
	done >/run/stacks
}
# cm_pair name port server client: the command line <server> in the
# background (until it listens on <port>: cm_listening(), or the function
# CM_READY names, called with <port>: rdma res shows no AF_IB listener),
# then <client>; both must succeed. Their
# output goes to the console as "RSIM-ROCE <name> srv|cli: line", and to
# /run/<name>-srv and /run/<name>-cli. The command lines are words
# without quotes (paths and addresses).
cm_pair() {
	local name="$1" port="$2" srv cli p rc=0 f l
	rm -f "/run/$name-srv" "/run/$name-cli"
	# shellcheck disable=SC2086 # words on purpose
	timeout 120 $3 >"/run/$name-srv" 2>&1 &
	srv=$!
	if ! wait_for "$name's server to listen on $port" 60 \
		"${CM_READY:-cm_listening}" "$port"; then
		kill "$srv" 2>/dev/null
		wait "$srv"
		rc=1
	else
		# shellcheck disable=SC2086
		timeout 120 $4 >"/run/$name-cli" 2>&1 &
		cli=$!
		# a program that hangs: where its threads wait, before
		# timeout ends it (rping's CM thread can wait for ever in
		# ucma's read: see ended_or_dump())
		for p in $cli $srv; do
			wait_for "$name's $p to end" 110 ended "$p" >/dev/null && continue
			stacks_of "$p"
			# and the QPs' states and the devices' data path
			# counters, which say whether a QP went to error
			{
				rdma res show qp 2>&1
				cat /sys/kernel/debug/rdmasim/*/datapath 2>/dev/null
			} >>/run/stacks
			while IFS= read -r l; do
				say "RSIM-ROCE $name stuck: $l"
			done </run/stacks
		done
		wait "$cli" || rc=$?
		wait "$srv" || rc=$((rc + 100))
	fi
	for f in srv cli; do
		[ -f "/run/$name-$f" ] || continue
		while IFS= read -r l; do
			say "RSIM-ROCE $name $f: $l"
		done <"/run/$name-$f"
	done
	[ $rc = 0 ] || echo "$name: exit $rc"
	return $rc
}
