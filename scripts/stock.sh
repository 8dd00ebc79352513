# SPDX-License-Identifier: GPL-2.0-only
# shellcheck shell=bash
# rdmasim on a distribution's stock kernel: Debian 12's unmodified
# linux-image-<release> (unpacked from its package, not installed) boots
# under QEMU with software emulation (TCG: never KVM) from an initramfs
# built here, and scripts/stock-init.sh runs the checks that need no KUnit
# on rdmasim built against the matching linux-headers package. Sourced
# after lib.sh, kernel.sh and boots.sh; uses lib.sh's RSIM_TOP, RSIM_CACHE,
# RSIM_OUT, SUDO, stage, die and rsim_apt_opts, kernel.sh's
# rsim_stock_headers (RSIM_STOCK_KDIR) and rsim_build_modules
# (RSIM_MODDIR), and boots.sh's rsim_boot bookkeeping.
#
#   rsim_stock_ready	-> RSIM_STOCK_KERNEL, RSIM_STOCK_INITRD,
#			   RSIM_STOCK_RELEASE (the modules built W=1 in
#			   $RSIM_OUT/build/stock-6.1 and make install'ed
#			   into the initramfs)
#   rsim_stock_boot log	the QEMU boot, in the background (rsim_boots_wait)
#   rsim_stock_judge log	check-run.py --nodebug --selftest

# The host programs the checks run, with their libraries; busybox (static)
# gives everything else. dash is /bin/sh: busybox's sh would run its own
# applets (modprobe, ip) in place of the host's programs.
RSIM_STOCK_PROGS="dash kmod ip rdma ibstat smpquery"
# The stock modules the checks load (modprobe adds their dependencies);
# rdma_rxe asks the crypto API for "crc32", which the kernel loads as
# crc32_generic (a request, not a module dependency)
RSIM_STOCK_MODS="ib_core ib_uverbs ib_umad rdma_rxe veth crc32_generic"

# rsim_stock_image <release>: linux-image-<release> from the bookworm
# list (rsim_stock_headers updated it), unpacked once per package version
# into $RSIM_CACHE/stock/, with depmod run on its modules. Sets
# RSIM_STOCK_IMAGE (the unpacked root).
rsim_stock_image() {
	local rel=$1 pkg=linux-image-$1 ver dir tmp
	# shellcheck disable=SC2046
	ver=$(apt-cache $(rsim_apt_opts bookworm) policy "$pkg" |
	      awk '/Candidate:/ { print $2 }')
	if [ -z "$ver" ] || [ "$ver" = "(none)" ]; then
		die "$pkg is not in the bookworm list"
	fi
	dir=$RSIM_CACHE/stock/$pkg-$ver
	RSIM_STOCK_IMAGE=$dir/root
	if [ -f "$dir/.complete" ]; then
		stage "stock kernel: $pkg $ver (cached)"
		return
	fi
	stage "fetching $pkg $ver"
	$SUDO mkdir -p "$dir"
	$SUDO chown "$(id -u)" "$dir"
	tmp=$(mktemp -d)
	# shellcheck disable=SC2046
	(cd "$tmp" && apt-get -q $(rsim_apt_opts bookworm) download "$pkg=$ver" >/dev/null) ||
		die "downloading $pkg failed"
	rm -rf "$RSIM_STOCK_IMAGE"
	dpkg-deb -x "$tmp/${pkg}_"*.deb "$RSIM_STOCK_IMAGE"
	rm -rf "$tmp"
	depmod -b "$RSIM_STOCK_IMAGE" "$rel"
	touch "$dir/.complete"
}

# rsim_stock_copy_prog <root> <program>: the program and every library
# ldd names (the loader too), at their host paths
rsim_stock_copy_prog() {
	local root=$1 p f
	p=$(command -v "$2") || die "$2 is not installed on the host"
	for f in "$p" $(ldd "$p" | grep -o '/[^ ]*'); do
		cp -L --parents "$f" "$root"
	done
}

# rsim_stock_initramfs <root dir> <release> <output>: busybox, the host
# programs, the stock modules of RSIM_STOCK_MODS with their dependencies,
# rdmasim's modules through make install (which runs depmod), and
# stock-init.sh as /init, packed as a gzip'ed newc cpio archive
rsim_stock_initramfs() {
	local root=$1 rel=$2 out=$3 p m a mods
	rm -rf "$root"
	mkdir -p "$root"/{bin,sbin,proc,sys,dev,run,rsim} "$root/lib/modules/$rel"
	cp /bin/busybox "$root/bin/busybox"
	for p in $RSIM_STOCK_PROGS; do
		rsim_stock_copy_prog "$root" "$p"
	done
	for a in insmod rmmod modprobe lsmod modinfo depmod; do
		ln -s /usr/bin/kmod "$root/sbin/$a"
	done
	ln -s "$(command -v dash)" "$root/bin/sh"
	# busybox for the rest, never in place of a host program
	for a in $("$root/bin/busybox" --list); do
		[ -e "$root/bin/$a" ] || [ -e "$root/sbin/$a" ] ||
			[ -e "$root/usr/sbin/$a" ] ||
			[ -e "$root/usr/bin/$a" ] || ln -s busybox "$root/bin/$a"
	done
	# shellcheck disable=SC2086 # one word per module
	mods=$(modprobe -d "$RSIM_STOCK_IMAGE" -S "$rel" --show-depends -a $RSIM_STOCK_MODS |
	       awk '$1 == "insmod" { print $2 }' | sort -u)
	[ -n "$mods" ] || die "no stock modules for $RSIM_STOCK_MODS"
	for m in $mods; do
		(cd "$RSIM_STOCK_IMAGE" && cp --parents ".${m#"$RSIM_STOCK_IMAGE"}" "$root")
	done
	for m in modules.order modules.builtin modules.builtin.modinfo; do
		cp "$RSIM_STOCK_IMAGE/lib/modules/$rel/$m" "$root/lib/modules/$rel/"
	done
	make -C "$RSIM_MODDIR" install KDIR="$RSIM_STOCK_KDIR" \
		INSTALL_MOD_PATH="$root" >>"$RSIM_MODDIR.log" 2>&1 || {
		tail -20 "$RSIM_MODDIR.log" >&2
		die "make install into the initramfs failed"
	}
	install -m 755 "$RSIM_TOP/scripts/stock-init.sh" "$root/init"
	cp "$RSIM_TOP/scripts/init-lib.sh" "$root/rsim/"
	(cd "$root" && find . | cpio -o -H newc --quiet | gzip -1) >"$out"
}

rsim_stock_ready() {
	local rel dir
	command -v qemu-system-x86_64 >/dev/null || die "no qemu-system-x86_64 (setup-host.sh)"
	rsim_stock_headers
	rel=${RSIM_STOCK_KDIR##*/linux-headers-}
	rsim_stock_image "$rel"
	rsim_build_modules "$RSIM_STOCK_KDIR" x86 stock-6.1
	dir=$RSIM_OUT/stock-6.1
	mkdir -p "$dir"
	rsim_stock_initramfs "$dir/root" "$rel" "$dir/initrd.gz"
	RSIM_STOCK_KERNEL=$RSIM_STOCK_IMAGE/boot/vmlinuz-$rel
	RSIM_STOCK_INITRD=$dir/initrd.gz
	RSIM_STOCK_RELEASE=$rel
	stage "stock $rel: initramfs $(du -h "$RSIM_STOCK_INITRD" | cut -f1) with rdmasim $(cat "$RSIM_MODDIR/.version")"
}

# rsim_stock_boot <log>: QEMU (TCG, one CPU, 1 GiB, serial console on
# the log) in the background; the guest powers off when it is done
rsim_stock_boot() {
	local log=$1
	timeout -k 10 "${RSIM_STOCK_TIMEOUT:-900}" qemu-system-x86_64 \
		-accel tcg -m 1024 -smp 1 -nographic -no-reboot -monitor none \
		-kernel "$RSIM_STOCK_KERNEL" -initrd "$RSIM_STOCK_INITRD" \
		-append "console=ttyS0 panic=-1 RSIM_VERSION=$(cat "$RSIM_MODDIR/.version")" \
		</dev/null >"$log" 2>&1 &
	RSIM_BOOTS="$RSIM_BOOTS $!"
	RSIM_BOOT_LOGS="$RSIM_BOOT_LOGS $log"
	stage "booting $RSIM_STOCK_RELEASE under QEMU (TCG): $log"
}

rsim_stock_judge() {
	rsim_judge "$1" -- --selftest --nodebug
}
