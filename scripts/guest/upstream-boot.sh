# shellcheck shell=sh
# SPDX-License-Identifier: GPL-2.0-only
#
# rdmasim built in-tree from make upstream's kernel series, in the UML
# debug kernel that series was applied to (scripts/upstream-check.sh's
# boot, script mode with RSIM_RDMASIM=0 RSIM_PEERS=0):
#   - modprobe rdmasim from the kernel's own modules: no module
#     parameters, no device at load;
#   - new_device makes rdmasim0 (lid= given) and the RDMA core has it;
#   - rdmasim_kunit.ko, built in-tree from the series' tests/, runs every
#     suite (the judge compares them with the module's, --kunit);
#   - the conformance suites (RSIM_CONF_KO) on rdmasim0, rdmasim1 and
#     rsim_veth2_rdmasim (RoCE mode), judged by conformance-table.py;
#   - the rdma-core series' pyverbs tests (RSIM_UPSTREAM_RDMA_CORE: its
#     source and build) with its libibverbs and provider, on rdmasim0
#     and rsim_veth2_rdmasim; then with rdma-core 65 and this tree's
#     provider (an old library on the new kernel), and at the end with
#     the series' library on this tree's rdmasim.ko (RSIM_UPSTREAM_OOT:
#     a new library on an old kernel);
#   - the series' kselftest (tools/testing/selftests/rdma/
#     rdmasim_new_device.sh) beside the kernel's ktap_helpers.sh;
#   - rdmasim0 deleted, the modules removed.
# Uses check(), capture(), has_line(), sysfs_is(), say(), part() and
# kselftest_rdmasim() from guest/lib.sh, roce_up(), subnet_up(),
# subnet_down() and conformance() from guest/init-uml.sh, and
# RSIM_UPSTREAM_SRC (the series' tree), RSIM_CONF_KO, RSIM_UPSTREAM_OOT,
# RSIM_UPSTREAM_RDMA_CORE and RSIM_RDMA_CORE_ENV (the project's rdma-core
# build, for its pyverbs) from the boot.

UMP="modprobe -d $RSIM_MODROOT -S $RSIM_KVER"
UDRV=/sys/bus/platform/drivers/rdmasim
# shellcheck disable=SC2086 # $UMP: words
check "upstream_modprobe_rdmasim" $UMP rdmasim
upstream_no_params() {
	[ ! -d /sys/module/rdmasim/parameters ] ||
		{ ls /sys/module/rdmasim/parameters; return 1; }
}
check "upstream_no_module_parameters" upstream_no_params
check "upstream_no_device_at_load" sh -c "! ls /sys/class/infiniband | grep -q rdmasim"
check "upstream_new_device" sh -c "echo '0 lid=0x1' >$UDRV/new_device"
check "upstream_rdmasim0_lid" sysfs_is /sys/class/infiniband/rdmasim0/ports/1/lid 0x1
capture /run/up-dev rdma dev show rdmasim0
check "upstream_rdma_dev" has_line /run/up-dev "*rdmasim0: node_type ca *"
part kunit
say "RSIM-KTAP-BEGIN"
# shellcheck disable=SC2086
check "upstream_modprobe_kunit" $UMP rdmasim_kunit
say "RSIM-KTAP-END"
# (its shared device, rdmasim1001, goes with it: conformance checks ours)
check "upstream_rmmod_kunit" rmmod rdmasim_kunit
# the conformance suites (rdma_conformance.ko, built against this
# kernel: RSIM_CONF_KO) on rdmasim0, rdmasim1 reached from rdmasim0 over
# the subnet, and a RoCE-mode device made with rdma link add on a veth
part conformance
# shellcheck disable=SC2086
check "upstream_modprobe_rdma_cm" $UMP rdma_cm
roce_up
subnet_up
conformance
subnet_down
# the rdma-core series' pyverbs tests (tests/test_rdmasim.py), with the
# series' libibverbs and provider (matched by RDMA_DRIVER_RDMASIM) and the
# project's pyverbs (rdma-core 65, built from the same source), on the
# InfiniBand device and on the RoCE-mode one: every test passes, none
# skips
part pyverbs
# upstream_pyverbs dev [old]: with the series' libibverbs and provider,
# or (old) with the project's rdma-core 65 and this tree's provider
upstream_pyverbs() {
	local ur="$RSIM_UPSTREAM_RDMA_CORE" n out="/run/up-pyverbs-$1-${2:-new}"
	n=$(grep -c '^    def test_' "$ur/src/tests/test_rdmasim.py")
	(
		# shellcheck disable=SC1090 # the build's
		. "$RSIM_RDMA_CORE_ENV"
		export LD_LIBRARY_PATH="$ur/build/lib"
		export PYTHONPATH="$RSIM_RDMA_CORE_PYTHONPATH"
		export RDMAV_DRIVERS="$ur/build/lib/librdmasim"
		if [ "${2:-}" = old ]; then
			LD_LIBRARY_PATH=$RSIM_RDMA_CORE_LIB
			RDMAV_DRIVERS=$RSIM_UPSTREAM_OOT/tools/provider/librdmasim
		fi
		export TMPDIR=/run/tmp
		python3 "$RSIM_TOP/scripts/guest/rdma-core-tests.py" "$ur/src" \
			"$1" 120 'tests.test_rdmasim.*'
	) >"$out" 2>&1
	while IFS= read -r l; do say "$l"; done <"$out"
	has_line "$out" "RSIM-RDMACORE $1 total $n ok $n skip 0 fail 0 error 0 notrun 0" &&
		[ "$n" -gt 0 ]
}
mkdir -p /run/tmp
check "upstream_pyverbs_rdmasim0" upstream_pyverbs rdmasim0
check "upstream_pyverbs_roce" upstream_pyverbs rsim_veth2_rdmasim
# an old library on the new kernel: rdma-core 65 as released and this
# tree's provider (matching by name and parent, not by the new driver id)
part combinations
check "upstream_old_provider_new_kernel" upstream_pyverbs rdmasim0 old
check "upstream_old_provider_new_kernel_roce" \
	upstream_pyverbs rsim_veth2_rdmasim old
check "upstream_rdma_link_del" rdma link del rsim_veth2_rdmasim
check "upstream_veth_del" ip link del rsim_veth2
part selftest
# the series' tree (the kernel's build names the debug kernel's source)
ukst=$RSIM_UPSTREAM_SRC/tools/testing/selftests
kselftest_rdmasim upstream_kselftest "$ukst" "$ukst/rdma/rdmasim_new_device.sh"
check "upstream_del_device" sh -c "echo 0 >$UDRV/del_device"
check "upstream_rmmod_rdmasim" rmmod rdmasim
# the new library on an old kernel: this tree's driver, which reports
# RDMA_DRIVER_UNKNOWN as rdmasim did before the series (its rdmasim0 made
# at load), and the series' library and provider
check "upstream_insmod_old_rdmasim" \
	insmod "$RSIM_UPSTREAM_OOT/drivers/infiniband/sw/rdmasim/rdmasim.ko"
check "upstream_old_rdmasim0_active" wait_for "rdmasim0's port" 30 \
	port_active rdmasim0
check "upstream_new_provider_old_kernel" upstream_pyverbs rdmasim0
check "upstream_rmmod_old_rdmasim" rmmod rdmasim
