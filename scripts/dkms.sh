#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# dkms.sh install [kernel release] | remove | check [kernel release]
#   install	copy the tree's files (git ls-files, or every file of a tree
#		that is not a clone) to /usr/src/rdmasim-<version> with
#		dkms.conf's version filled in and a .version file, then
#		"dkms add" and "dkms install" for the release (default: the
#		running kernel); make dkms-install
#   remove	"dkms remove rdmasim/<v> --all" for every version DKMS
#		has, and their /usr/src copies; make dkms-remove
#   check	make check's DKMS test: install for the release (Debian 12's
#		stock headers), then dkms status must say "installed", the
#		installed rdmasim.ko's vermagic must name the release and its
#		version must be this tree's; then remove
# Uses lib.sh's RSIM_TOP, SUDO, stage and die.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

version=$(sh "$RSIM_TOP/scripts/version.sh" "$RSIM_TOP")

dkms_install() {
	local kver=$1 src=/usr/src/rdmasim-$version
	command -v dkms >/dev/null || die "dkms is not installed (apt-get install dkms)"
	[ -e "/lib/modules/$kver/build" ] ||
		die "no headers for $kver (/lib/modules/$kver/build)"
	# a version already added is replaced (a rebuild of the same commit)
	if dkms status "rdmasim/$version" | grep -q .; then
		$SUDO dkms remove "rdmasim/$version" --all >/dev/null
	fi
	$SUDO rm -rf "$src"
	$SUDO mkdir -p "$src"
	if git -C "$RSIM_TOP" rev-parse --git-dir >/dev/null 2>&1; then
		(cd "$RSIM_TOP" && git ls-files -co --exclude-standard -z |
			$SUDO xargs -0 cp --parents -t "$src")
	else
		$SUDO cp -a "$RSIM_TOP/." "$src/"
	fi
	$SUDO rm -rf "$src/out"
	echo "$version" | $SUDO tee "$src/.version" >/dev/null
	$SUDO sed -i "s/@VERSION@/$version/" "$src/dkms.conf"
	$SUDO dkms add "rdmasim/$version"
	$SUDO dkms install "rdmasim/$version" -k "$kver" || {
		tail -30 "/var/lib/dkms/rdmasim/$version/build/make.log" >&2 || true
		die "dkms install rdmasim/$version -k $kver failed"
	}
	stage "dkms: rdmasim/$version installed for $kver"
}

dkms_remove() {
	local v
	for v in $(dkms status rdmasim 2>/dev/null |
		   sed -n 's|^rdmasim/\([^,:]*\).*|\1|p' | sort -u); do
		$SUDO dkms remove "rdmasim/$v" --all >/dev/null
		$SUDO rm -rf "/usr/src/rdmasim-$v"
		stage "dkms: rdmasim/$v removed"
	done
}

dkms_check() {
	local kver=$1 st ko got
	dkms_install "$kver"
	st=$(dkms status "rdmasim/$version" -k "$kver")
	echo "dkms status: $st"
	case $st in
	*"$kver"*": installed"*) ;;
	*) die "dkms status does not say rdmasim/$version is installed for $kver" ;;
	esac
	ko=$(find "/lib/modules/$kver/updates/dkms" -name 'rdmasim.ko*' | head -1)
	[ -n "$ko" ] || die "no rdmasim.ko under /lib/modules/$kver/updates/dkms"
	got=$(modinfo -F vermagic "$ko")
	case $got in
	"$kver "*) ;;
	*) die "$ko: vermagic '$got', not $kver" ;;
	esac
	got=$(modinfo -F version "$ko")
	[ "$got" = "$version" ] || die "$ko: version '$got', not $version"
	modinfo -F depends "$ko" | grep -qw ib_core ||
		die "$ko: does not depend on ib_core"
	# depmod ran: modprobe finds the module (the QEMU boot checks that it
	# pulls in ib_core: this host has no modules of $kver)
	grep -q "^updates/dkms/rdmasim.ko" "/lib/modules/$kver/modules.dep" ||
		die "modules.dep of $kver has no rdmasim entry"
	stage "dkms: status, vermagic ($kver), version $version and modules.dep checked"
	dkms_remove
	[ -z "$(find "/lib/modules/$kver/updates/dkms" -name 'rdmasim*' 2>/dev/null)" ] ||
		die "dkms remove left rdmasim modules in /lib/modules/$kver"
	stage "dkms check passed"
}

case ${1:-} in
install) dkms_install "${2:-$(uname -r)}" ;;
remove) dkms_remove ;;
check) dkms_check "${2:?usage: dkms.sh check <kernel release>}" ;;
*) die "usage: dkms.sh install [release] | remove | check <release>" ;;
esac
