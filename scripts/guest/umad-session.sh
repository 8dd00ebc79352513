# shellcheck shell=sh
# SPDX-License-Identifier: GPL-2.0-only
#
# rdmasim: the userspace management session of Documentation/rdmasim.rst
# ("A management session"), for script mode (with rdmasim0 loaded and no
# peers), which regenerates its output:
#
#   RSIM_UML_ARGS="RSIM_SCRIPT=$PWD/scripts/guest/umad-session.sh RSIM_PEERS=0" \
#	scripts/boot-uml.sh script out/uml-session.log
#
# (with scripts/lib-kernel.sh's rsim_uml_ready's variables in the environment;
# make selftest sets them up). Each command is echoed as "$ command" to
# the console, then its output; tools/umad/rsim_umad is the one built in
# RSIM_MODDIR.

# session command...: show and run one command line
session() {
	local l
	echo "\$ $*" | sed "s|$RSIM_MODDIR/||" >/dev/console
	"$@" >/run/session.out 2>&1 || echo "(exit status $?)" >>/run/session.out
	while IFS= read -r l; do echo "$l"; done </run/session.out >/dev/console
}

U=$RSIM_MODDIR/tools/umad/rsim_umad
say "RSIM-SESSION-BEGIN"
session ibstat
session ibaddr
session smpquery -D nodeinfo 0
session smpquery portinfo 1
session perfquery
session perfquery -x
session perfquery -R
session perfquery
session "$U" -D nodeinfo portinfo
session "$U" counters unknown
session "$U" small rmpp
echo "\$ echo 3 > /sys/bus/platform/drivers/rdmasim/new_device" >/dev/console
echo 3 >"$PLAT/new_device"
echo "\$ tools/umad/rsim_umad -C rdmasim3 block &" >/dev/console
"$U" -C rdmasim3 block >/run/session.blk 2>&1 &
blk=$!
sleep 2
echo "\$ echo 3 > /sys/bus/platform/drivers/rdmasim/del_device" >/dev/console
echo 3 >"$PLAT/del_device"
wait $blk
echo "(exit status $?)" >>/run/session.blk
while IFS= read -r l; do echo "$l"; done </run/session.blk >/dev/console
say "RSIM-SESSION-END"
