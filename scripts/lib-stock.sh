# SPDX-License-Identifier: GPL-2.0-only
# shellcheck shell=bash
# rdmasim on a distribution's stock kernel: Debian's unmodified
# linux-image-<release> (unpacked from its package, not installed) boots
# under QEMU with software emulation (TCG: never KVM) from an initramfs
# built here, and scripts/guest/init-qemu.sh runs the checks that need no KUnit
# on rdmasim built against that kernel's headers. Three series:
#   6.1	 Debian 12's: its linux-headers package, installed (the way
#	 users build out-of-tree modules there)
#   6.12 Debian 13's: its headers package cannot be installed on Debian
#	 12 (its kbuild programs need glibc 2.38, the kernel gcc 14), so
#	 rdmasim builds in a minimal Debian 13 root (debootstrap) with the
#	 headers installed there, as on a Debian 13 host. (Building with
#	 Debian 12's gcc 12 in linux-source-6.12 prepared with the stock
#	 .config and Module.symvers links, but the module fails to load:
#	 "x86/modules: Invalid relocation target".)
#   7.3	 Debian 13's backports: the same, the headers from
#	 trixie-backports (the kernel split into linux-binary-, -base- and
#	 -modules- packages)
# Sourced after lib.sh, lib-kernel.sh and lib-boots.sh; uses lib.sh's RSIM_TOP,
# RSIM_CACHE, RSIM_OUT, SUDO, stage, die, debian_mirror, rsim_apt_opts
# and rsim_apt_update_kernel, lib-kernel.sh's rsim_stock_headers,
# rsim_in_root and rsim_build_modules (RSIM_MODDIR), and lib-boots.sh's
# rsim_boot bookkeeping and rsim_judge.
#
#   rsim_stock_ready <series>	-> RSIM_STOCK_KDIR, RSIM_STOCK_RELEASE,
#				   RSIM_STOCK_KERNEL, RSIM_STOCK_INITRD,
#				   RSIM_STOCK_APPEND (the kernel's extra
#				   parameters), RSIM_STOCK_TOOLS,
#				   RSIM_STOCK_VERSION (the modules built
#				   W=1 in $RSIM_OUT/build/stock-6.1 or the
#				   Debian 13 root's /build/stock-6.12, and
#				   make install'ed into the initramfs)
#   rsim_stock_boot <log>	that kernel under QEMU, in the background
#				(rsim_boots_wait waits for it)
#   rsim_stock_judge <log>	judge-log.py --nodebug --selftest

# The host programs the checks run, with their libraries; busybox (static)
# gives everything else. dash is /bin/sh: busybox's sh would run its own
# applets (modprobe, ip) in place of the host's programs.
RSIM_STOCK_PROGS="dash kmod ip rdma ibstat smpquery"
# The stock modules the checks load (modprobe adds their dependencies:
# pci-stub holds a function the IOMMU boot's new_device then finds busy);
# and where the kernel has it, crc32_generic: rdma_rxe before 6.15 or so
# asks the crypto API for "crc32" (a request, not a module dependency)
RSIM_STOCK_MODS="ib_core ib_uverbs ib_umad rdma_rxe veth pci-stub"
RSIM_STOCK_OPT_MODS="crc32_generic"
# The series make stock and make check boot (RSIM_STOCK_SERIES=7.3: one).
# shellcheck disable=SC2034 # for the scripts that source this one
RSIM_STOCK_SERIES=${RSIM_STOCK_SERIES:-"6.1 6.12 7.3"}
# The series whose boot runs with swiotlb=force: every streaming DMA
# mapping bounced, so that no DMA address is the physical address of the
# memory it maps. 6.12, not 7.3: from 7.x on the core maps pinned user
# memory with DMA_ATTR_REQUIRE_COHERENT (drivers/infiniband/core/umem.c),
# which fails rather than bounce, so a user MR is refused (EIO) there
# before rdmasim sees it; 6.12 bounces it, as 6.1 does. Its initramfs also carries rdma-core's libibverbs,
# rdmasim's provider and tools/provider's rsim_stress (two threads, one
# QP, every byte checked, in pinned user memory and device memory) and
# rsim_charge (a process's objects charged to its memory cgroup: the
# stock kernel has memory cgroups, the UML kernels do not).
RSIM_STOCK_SWIOTLB_SERIES=6.12
# The series whose boot runs behind an emulated IOMMU (q35 with VT-d,
# intel_iommu=on) with QEMU's edu function: init-qemu.sh loads rdmasim a
# second time with dma_pci naming it, so that every DMA address is an I/O
# virtual address the data path translates through the IOMMU's tables.
# make bench boots it too (bench-iommu.sh), for the PUDA pool's figures.
RSIM_STOCK_IOMMU_SERIES=7.3
RSIM_STOCK_IOMMU_QEMU="-machine q35 -device intel-iommu -device edu"

# rsim_stock_image <release>: linux-image-<release> from the kernel list
# (trixie, trixie-backports, bookworm), with the packages 7.3 splits it
# into (linux-binary-, linux-base-, linux-modules-<release>) where they
# exist, unpacked once per version into $RSIM_CACHE/stock/ with depmod run
# on its modules (Debian 13 keeps them in /usr/lib/modules: a lib link
# makes both look alike). Sets RSIM_STOCK_IMAGE (the unpacked root) and
# RSIM_STOCK_KERNEL.
rsim_stock_image() {
	local rel=$1 ver dir tmp p pkgs=linux-image-$1
	# shellcheck disable=SC2046
	ver=$(apt-cache $(rsim_apt_opts) policy "$pkgs" | awk '/Candidate:/ { print $2 }')
	if [ -z "$ver" ] || [ "$ver" = "(none)" ]; then
		die "linux-image-$rel is not in the Debian archive"
	fi
	for p in linux-binary linux-base linux-modules; do
		# shellcheck disable=SC2046
		apt-cache $(rsim_apt_opts) show "$p-$rel" >/dev/null 2>&1 &&
			pkgs="$pkgs $p-$rel"
	done
	dir=$RSIM_CACHE/stock/linux-image-$rel-$ver
	RSIM_STOCK_IMAGE=$dir/root
	if [ ! -f "$dir/.complete" ]; then
		stage "fetching $pkgs ($ver)"
		$SUDO mkdir -p "$dir"
		$SUDO chown "$(id -u)" "$dir"
		rm -rf "$RSIM_STOCK_IMAGE"
		tmp=$(mktemp -d)
		for p in $pkgs; do
			# shellcheck disable=SC2046
			(cd "$tmp" && apt-get -q $(rsim_apt_opts) download "$p=$ver" >/dev/null) ||
				die "downloading $p failed"
			dpkg-deb -x "$tmp/${p}_"*.deb "$RSIM_STOCK_IMAGE"
		done
		rm -rf "$tmp"
		if [ ! -e "$RSIM_STOCK_IMAGE/lib" ]; then
			ln -s usr/lib "$RSIM_STOCK_IMAGE/lib"
		fi
		depmod -b "$RSIM_STOCK_IMAGE" "$rel"
		touch "$dir/.complete"
	fi
	RSIM_STOCK_KERNEL=$RSIM_STOCK_IMAGE/boot/vmlinuz-$rel
	[ -f "$RSIM_STOCK_KERNEL" ] || RSIM_STOCK_KERNEL=$RSIM_STOCK_IMAGE/lib/modules/$rel/vmlinuz
	[ -f "$RSIM_STOCK_KERNEL" ] || die "no vmlinuz in $pkgs"
	stage "stock kernel: $pkgs ($ver)"
}

# rsim_stock_trixie <series>: a minimal Debian 13 root (debootstrap,
# cached in $RSIM_CACHE/stock/trixie, one for every series) with make,
# perl, xz, binutils and kmod, and Debian 13's newest
# linux-headers-<series>.<n>+deb13-amd64 (not -rt-, not -cloud-; 7.3's
# from trixie-backports) installed in it beside the other series'
# headers, where rdmasim builds the way it builds on a Debian 13 host.
# Sets RSIM_STOCK_RELEASE, RSIM_STOCK_CHROOT and RSIM_STOCK_KDIR (a path
# inside the root).
rsim_stock_trixie() {
	local series=$1 pkg dir root mirror
	# shellcheck disable=SC2046
	pkg=$(apt-cache $(rsim_apt_opts) pkgnames "linux-headers-$series." |
	      grep -E -- "^linux-headers-${series//./\\.}\\.[0-9]+[^-]*-amd64\$" |
	      sort -V | tail -1)
	[ -n "$pkg" ] || die "no linux-headers-$series.*-amd64 in the Debian archive"
	RSIM_STOCK_RELEASE=${pkg#linux-headers-}
	RSIM_STOCK_KDIR=/usr/src/$pkg
	dir=$RSIM_CACHE/stock/trixie
	root=$dir/root
	RSIM_STOCK_CHROOT=$root
	rsim_lock stock-trixie
	if [ -f "$dir/.has-$pkg" ]; then
		rsim_unlock
		stage "Debian 13 root with $pkg (cached)"
		return
	fi
	mirror=$(debian_mirror)
	if [ ! -f "$dir/.complete" ]; then
		stage "Debian 13 root (debootstrap)"
		$SUDO rm -rf "$root"
		$SUDO mkdir -p "$root"
		$SUDO debootstrap --variant=minbase \
			--include=make,perl,xz-utils,binutils,kmod \
			trixie "$root" "$mirror" >"$dir/debootstrap.log" 2>&1 || {
			tail -20 "$dir/debootstrap.log" >&2
			die "debootstrap trixie failed (log: $dir/debootstrap.log)"
		}
		# apt in the root, backports listed too
		printf 'deb %s trixie main\ndeb %s trixie-backports main\n' \
			"$mirror" "$mirror" |
			$SUDO tee "$root/etc/apt/sources.list" >/dev/null
		$SUDO touch "$dir/.complete"
	fi
	# the headers (and the gcc and kernel image they depend on)
	stage "Debian 13 root: installing $pkg"
	{
		rsim_in_root "$root" apt-get -q update &&
		DEBIAN_FRONTEND=noninteractive rsim_in_root "$root" apt-get -q -y \
			install --no-install-recommends "$pkg"
	} >>"$dir/debootstrap.log" 2>&1 || {
		tail -20 "$dir/debootstrap.log" >&2
		die "installing $pkg in the Debian 13 root failed (log: $dir/debootstrap.log)"
	}
	$SUDO touch "$dir/.has-$pkg"
	rsim_unlock
}

# rsim_stock_copy_prog <root> <program>: the program found in PATH, as
# rsim_stock_copy_file copies it
rsim_stock_copy_prog() {
	local p
	p=$(command -v "$2") || die "$2 is not installed on the host"
	rsim_stock_copy_file "$1" "$p"
}

# rsim_stock_tools <dir>: rdma-core (built once and cached, or waited for
# where another job is building it), and rdmasim's provider, rsim_stress
# and rsim_charge built against it in <dir> (host programs, whatever the
# kernel). Sets RSIM_STOCK_TOOLS.
rsim_stock_tools() {
	local dir=$1
	rsim_rdma_core
	rm -rf "$dir"
	mkdir -p "$dir"
	(cd "$RSIM_TOP" && cp --parents tools/provider/Makefile tools/provider/*.[ch] \
		include/rdmasim/rdmasim-abi.h "$dir")
	make -C "$dir/tools/provider" "librdmasim-rdmav$RSIM_RDMA_CORE_PABI.so" \
		rsim_stress rsim_charge >"$dir.log" 2>&1 || {
		tail -20 "$dir.log" >&2
		die "building the provider, rsim_stress and rsim_charge failed"
	}
	RSIM_STOCK_TOOLS=$dir/tools/provider
}

# rsim_stock_copy_file <root> <file>: the file and every library ldd
# names (the loader too), at their host paths
rsim_stock_copy_file() {
	local root=$1 f
	for f in "$2" $(ldd "$2" | grep -o '/[^ ]*'); do
		cp -L --parents "$f" "$root"
	done
}

# rsim_stock_initramfs <root dir> <release> <output>: busybox, the host
# programs, the stock modules of RSIM_STOCK_MODS with their dependencies,
# rdmasim's modules through make install (which runs depmod), and
# guest/init-qemu.sh as /init, packed as a gzip'ed newc cpio archive
rsim_stock_initramfs() {
	local root=$1 rel=$2 out=$3 p m a mods run=
	[ -z "$RSIM_STOCK_CHROOT" ] || run="rsim_in_root $RSIM_STOCK_CHROOT"
	rm -rf "$root"
	mkdir -p "$root"/{bin,sbin,proc,sys,dev,run,rsim} "$root/lib/modules/$rel"
	cp /bin/busybox "$root/bin/busybox"
	for p in $RSIM_STOCK_PROGS; do
		rsim_stock_copy_prog "$root" "$p"
	done
	# rsim_stress finds libibverbs by its RUNPATH, libibverbs the
	# provider by the absolute path RDMAV_DRIVERS names (/rsim/stress.env);
	# the provider's own libraries are the programs' (it has no RUNPATH:
	# the libibverbs that loads it is the build's)
	if [ -n "$RSIM_STOCK_TOOLS" ]; then
		rsim_stock_copy_file "$root" "$RSIM_STOCK_TOOLS/rsim_stress"
		rsim_stock_copy_file "$root" "$RSIM_STOCK_TOOLS/rsim_charge"
		cp --parents "$RSIM_STOCK_TOOLS/librdmasim-rdmav$RSIM_RDMA_CORE_PABI.so" \
			"$root"
		echo "RSIM_STRESS=$RSIM_STOCK_TOOLS/rsim_stress" >"$root/rsim/stress.env"
		echo "RSIM_CHARGE=$RSIM_STOCK_TOOLS/rsim_charge" >>"$root/rsim/stress.env"
		echo "RDMAV_DRIVERS=$RSIM_STOCK_TOOLS/librdmasim" >>"$root/rsim/stress.env"
	fi
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
	mods=$RSIM_STOCK_MODS
	for m in $RSIM_STOCK_OPT_MODS; do
		modprobe -d "$RSIM_STOCK_IMAGE" -S "$rel" -n "$m" 2>/dev/null && mods="$mods $m"
	done
	# shellcheck disable=SC2086 # one word per module
	mods=$(modprobe -d "$RSIM_STOCK_IMAGE" -S "$rel" --show-depends -a $mods |
	       awk '$1 == "insmod" { print $2 }' | sort -u)
	[ -n "$mods" ] || die "no stock modules for $RSIM_STOCK_MODS"
	for m in $mods; do
		(cd "$RSIM_STOCK_IMAGE" && cp --parents ".${m#"$RSIM_STOCK_IMAGE"}" "$root")
	done
	for m in modules.order modules.builtin modules.builtin.modinfo; do
		cp "$RSIM_STOCK_IMAGE/lib/modules/$rel/$m" "$root/lib/modules/$rel/"
	done
	# make install into a staging root (where the build ran), then
	# depmod over the stock modules and rdmasim's together
	rm -rf "$RSIM_MODDIR-install"
	# (W=1 as the build had it, or every object is compiled again)
	$run make -C "${RSIM_MODDIR#"$RSIM_STOCK_CHROOT"}" install KDIR="$RSIM_STOCK_KDIR" W=1 \
		INSTALL_MOD_PATH="${RSIM_MODDIR#"$RSIM_STOCK_CHROOT"}-install" \
		>>"$RSIM_MODDIR.log" 2>&1 || {
		tail -20 "$RSIM_MODDIR.log" >&2
		die "make install into the initramfs failed"
	}
	cp -a "$RSIM_MODDIR-install/lib/modules/$rel/." "$root/lib/modules/$rel/"
	depmod -b "$root" "$rel"
	install -m 755 "$RSIM_TOP/scripts/guest/init-qemu.sh" "$root/init"
	cp "$RSIM_TOP/scripts/guest/lib.sh" "$root/rsim/"
	(cd "$root" && find . | cpio -o -H newc --quiet | gzip -1) >"$out"
}

rsim_stock_ready() {
	local series=$1 dir
	RSIM_STOCK_CHROOT=
	command -v qemu-system-x86_64 >/dev/null || die "no qemu-system-x86_64 (setup-host.sh)"
	rsim_apt_update_kernel
	case $series in
	6.1)
		rsim_stock_headers
		RSIM_STOCK_RELEASE=${RSIM_STOCK_KDIR##*/linux-headers-}
		;;
	6.12 | 7.3)
		rsim_stock_trixie "$series"
		;;
	*)
		die "stock kernels: 6.1, 6.12 or 7.3, not $series"
		;;
	esac
	rsim_stock_image "$RSIM_STOCK_RELEASE"
	RSIM_CHROOT=${RSIM_STOCK_CHROOT:-} rsim_build_modules "$RSIM_STOCK_KDIR" x86 "stock-$series"
	RSIM_STOCK_VERSION=$(cat "$RSIM_MODDIR/.version")
	dir=$RSIM_OUT/stock-$series
	mkdir -p "$dir"
	RSIM_STOCK_TOOLS=
	RSIM_STOCK_APPEND=
	RSIM_STOCK_QEMU=
	if [ "$series" = "$RSIM_STOCK_SWIOTLB_SERIES" ]; then
		rsim_stock_tools "$dir/tools"
		RSIM_STOCK_APPEND="swiotlb=force"
	fi
	if [ "$series" = "$RSIM_STOCK_IOMMU_SERIES" ]; then
		RSIM_STOCK_QEMU=$RSIM_STOCK_IOMMU_QEMU
		RSIM_STOCK_APPEND="intel_iommu=on"
	fi
	rsim_stock_initramfs "$dir/root" "$RSIM_STOCK_RELEASE" "$dir/initrd.gz"
	RSIM_STOCK_INITRD=$dir/initrd.gz
	stage "stock $RSIM_STOCK_RELEASE: initramfs $(du -h "$RSIM_STOCK_INITRD" | cut -f1) with rdmasim $RSIM_STOCK_VERSION"
}

# rsim_stock_boot <log> [cpus]: QEMU (TCG, one CPU or [cpus], 1 GiB,
# serial console on the log; RSIM_STOCK_QEMU's machine and devices) in
# the background; the guest powers off when it is done.
# no_timer_check: on a loaded host the emulated CPU can miss the IO-APIC
# timer check's ticks, and 6.1 then panics at boot ("IO-APIC + timer
# doesn't work!", seen once in a cold make check); KVM guests skip that
# check the same way. watchdog_thresh=60 (its maximum: a soft lockup is
# reported after 120 s): an emulated CPU on a loaded host is not real
# time, and 6.12's jitterentropy self-test, built in, once held it for
# 68 s at boot (a soft lockup report in a clean-clone make check, with
# three boots and the UML ones sharing two host CPUs). A hang in
# rdmasim still trips it, and the debug UML kernels keep the default.
rsim_stock_boot() {
	local log=$1 cpus=${2:-1}
	# shellcheck disable=SC2094 # rsim_bg writes <log>.wall, not <log>
	# shellcheck disable=SC2086 # RSIM_STOCK_QEMU is words
	rsim_bg "$log" timeout -k 10 "${RSIM_STOCK_TIMEOUT:-900}" qemu-system-x86_64 \
		-accel tcg -m 1024 -smp "$cpus" -nographic -no-reboot -monitor none \
		${RSIM_STOCK_QEMU:-} \
		-kernel "$RSIM_STOCK_KERNEL" -initrd "$RSIM_STOCK_INITRD" \
		-append "console=ttyS0 panic=-1 no_timer_check watchdog_thresh=60 $RSIM_STOCK_APPEND RSIM_VERSION=$RSIM_STOCK_VERSION" \
		</dev/null >"$log" 2>&1
	stage "booting $RSIM_STOCK_RELEASE under QEMU (TCG): $log"
}

# rsim_stock_judge <log> [label]: its checks, and a clean log; with a
# label, a line of make check's summary
rsim_stock_judge() {
	rsim_judge "$1" -- --selftest --nodebug ${2:+--summary "$RSIM_SUMMARY" --label "$2"}
}
