#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Install what the build and the tests need on a Debian 12 machine.
# Idempotent: a second run installs nothing. Uses lib.sh's SUDO. A script
# that ran it exports RSIM_HOST_READY=1: the scripts it starts skip it.
set -euo pipefail
[ -z "${RSIM_HOST_READY:-}" ] || exit 0
. "$(dirname "$0")/lib.sh"

PKGS="build-essential bc bison flex kmod sparse python3 perl xz-utils patch
      git iproute2 rdma-core ibverbs-utils infiniband-diags libibumad-dev
      libibmad-dev
      debian-archive-keyring ca-certificates"
# the IPoIB pings of the InfiniBand subnet's selftest; the fabric's
# subnet manager (make fabric)
PKGS="$PKGS iputils-ping opensm"
# rdma-core 65's build (scripts/build-rdma-core.sh; pyverbs: python3-dev,
# cython3; the dma-buf parts of pyverbs and the tests: libdrm-dev), and
# sid's perftest built against it (libpci-dev)
PKGS="$PKGS cmake ninja-build pkg-config dpkg-dev libnl-3-dev
      libnl-route-3-dev libudev-dev libdrm-dev python3-dev cython3 libpci-dev"

# the outside suites (scripts/peers.sh, make peers, and make check's
# subset): what blktests' nvme and srp groups run (fio, nvme-cli,
# multipath-tools, sg3-utils, mkfs.xfs, killall; gawk for blktests itself;
# rsync for kselftest's install of the kernel's rdma selftests)
PKGS="$PKGS fio nvme-cli multipath-tools sg3-utils xfsprogs e2fsprogs psmisc gawk rsync"

# the stock-kernel boots and the DKMS test (scripts/lib-stock.sh, dkms.sh),
# installed without recommends: no graphical front end for QEMU
# (debootstrap: the Debian 13 root where rdmasim builds for stock 6.12
# and 7.3)
STOCK_PKGS="qemu-system-x86 busybox-static cpio dkms debootstrap"

# missing <package>...: those not installed, each after a space
missing() {
	local p
	for p in "$@"; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" ||
			printf ' %s' "$p"
	done
}

# shellcheck disable=SC2086 # one word per package
base=$(missing $PKGS)
# shellcheck disable=SC2086
stock=$(missing $STOCK_PKGS)
if [ -n "$base$stock" ]; then
	stage "installing:$base$stock"
	rsim_apt_get update >/dev/null
	# shellcheck disable=SC2086
	[ -z "$base" ] ||
		rsim_apt_get -y install $base >/dev/null
	# shellcheck disable=SC2086
	[ -z "$stock" ] ||
		rsim_apt_get -y install --no-install-recommends $stock >/dev/null
fi
stage "host packages ready"
