# shellcheck shell=sh
# SPDX-License-Identifier: GPL-2.0-only
#
# rdmasim: the smoke test of scripts/build-rdma-core.sh's build, sourced by
# guest/init-uml.sh in script mode (RSIM_SCRIPT) with rdmasim0, rxe0 and siw0
# up: the build's ibv_devices, ibv_devinfo -d rxe0 and ibv_devinfo -d
# rdmasim0 (which has no provider yet), run as host binaries through
# hostfs, each output line on the console as "RSIM-RDMA-CORE <tool>:
# <line>". RSIM_RDMA_CORE_ENV names the build's rsim-env.sh. Uses check()
# and capture() from guest/init-uml.sh.

# shellcheck disable=SC1090 # the build's
. "$RSIM_RDMA_CORE_ENV"
export LD_LIBRARY_PATH="$RSIM_RDMA_CORE_LIB"

# rdma_core_run tag cmd...: cmd's output and exit status on the console
rdma_core_run() {
	local tag="$1" rc=0 l
	shift
	"$@" >/run/rdma-core.out 2>&1 || rc=$?
	while IFS= read -r l; do
		say "RSIM-RDMA-CORE $tag: $l"
	done </run/rdma-core.out
	say "RSIM-RDMA-CORE $tag: exit $rc"
	return $rc
}

say "RSIM-RDMA-CORE rdma-core $RSIM_RDMA_CORE_VER from $RSIM_RDMA_CORE_BUILD"
check "rdma_core_ibv_devices" rdma_core_run ibv_devices \
	"$RSIM_RDMA_CORE_BIN/ibv_devices"
check "rdma_core_ibv_devinfo_rxe0" rdma_core_run "ibv_devinfo rxe0" \
	"$RSIM_RDMA_CORE_BIN/ibv_devinfo" -d rxe0
# no provider for rdmasim0 yet: recorded, not judged (IBV_SHOW_WARNINGS
# makes libibverbs name the devices it found no provider for)
rdma_core_run "ibv_devinfo rdmasim0" env IBV_SHOW_WARNINGS=1 \
	"$RSIM_RDMA_CORE_BIN/ibv_devinfo" -d rdmasim0 || true
