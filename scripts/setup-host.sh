#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Install what the build and the tests need on a Debian 12 machine.
# Idempotent: a second run installs nothing. Uses lib.sh's SUDO.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

PKGS="build-essential bc bison flex kmod sparse python3 perl xz-utils
      git iproute2 rdma-core ibverbs-utils infiniband-diags libibumad-dev
      debian-archive-keyring ca-certificates"

missing=
for p in $PKGS; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" ||
		missing="$missing $p"
done
if [ -n "$missing" ]; then
	stage "installing:$missing"
	$SUDO apt-get -q update >/dev/null
	# shellcheck disable=SC2086
	DEBIAN_FRONTEND=noninteractive $SUDO apt-get -q -y install $missing >/dev/null
fi
# the stock-kernel boot and the DKMS test (scripts/stock.sh, dkms.sh),
# without recommends: no graphical front end for QEMU
# (debootstrap: the Debian 13 root where rdmasim builds for stock 6.12)
STOCK_PKGS="qemu-system-x86 busybox-static cpio dkms debootstrap"
missing=
for p in $STOCK_PKGS; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" ||
		missing="$missing $p"
done
if [ -n "$missing" ]; then
	stage "installing:$missing"
	$SUDO apt-get -q update >/dev/null
	# shellcheck disable=SC2086
	DEBIAN_FRONTEND=noninteractive $SUDO apt-get -q -y install \
		--no-install-recommends $missing >/dev/null
fi
stage "host packages ready"
