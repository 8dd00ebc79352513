# SPDX-License-Identifier: GPL-2.0-only
# rdmasim: fetch Debian kernel sources and build the UML test kernel, both
# cached under $RSIM_CACHE so that later runs skip them. Sourced.
#
#   rsim_fetch_source 7.3	-> RSIM_KSRC (KSRC= overrides: the user's tree)
#   rsim_build_uml debug|bench	-> RSIM_KBUILD, RSIM_MODROOT

# rsim_fetch_source <series>: unpack linux-source-<series> once per
# Debian package version.
rsim_fetch_source() {
	local series=$1 ver dir tarball tmp
	if [ -n "${KSRC:-}" ]; then
		[ -f "$KSRC/Makefile" ] || die "KSRC=$KSRC is not a kernel tree"
		RSIM_KSRC=$(cd "$KSRC" && pwd)
		RSIM_KSRC_ID="local-$(kernel_version "$RSIM_KSRC")"
		stage "kernel source: $RSIM_KSRC (KSRC)"
		return
	fi
	rsim_apt_update_kernel
	# shellcheck disable=SC2046
	ver=$(apt-cache $(rsim_apt_opts) policy "linux-source-$series" |
	      awk '/Candidate:/ { print $2 }')
	[ -n "$ver" ] && [ "$ver" != "(none)" ] ||
		die "linux-source-$series is not in the Debian archive"
	dir=$RSIM_CACHE/src/linux-source-$series-$ver
	RSIM_KSRC=$dir/linux-source-$series
	RSIM_KSRC_ID="$series-$ver"
	if [ -f "$dir/.complete" ]; then
		stage "kernel source: linux-source-$series $ver (cached)"
		return
	fi
	stage "fetching linux-source-$series $ver"
	$SUDO mkdir -p "$dir"
	tmp=$(mktemp -d)
	# shellcheck disable=SC2046
	(cd "$tmp" && apt-get -q $(rsim_apt_opts) download "linux-source-$series=$ver" >/dev/null) ||
		die "downloading linux-source-$series failed"
	dpkg-deb -x "$tmp"/linux-source-"$series"_*.deb "$tmp/x"
	tarball=$(ls "$tmp"/x/usr/src/linux-source-"$series".tar.*)
	stage "unpacking $(basename "$tarball")"
	$SUDO rm -rf "$RSIM_KSRC"
	$SUDO tar -C "$dir" -xf "$tarball"
	rm -rf "$tmp"
	$SUDO touch "$dir/.complete"
}

# rsim_build_uml <debug|bench>: configure and build the UML kernel from
# kunit/configs/uml-base.config plus uml-<kind>.config; cached by kernel
# version, fragment contents and compiler.
rsim_build_uml() {
	local kind=$1 frags hash dir log
	frags="$RSIM_TOP/kunit/configs/uml-base.config $RSIM_TOP/kunit/configs/uml-$kind.config"
	hash=$( (cat $frags; echo "$RSIM_KSRC_ID"; gcc --version | head -1) |
		sha256sum | cut -c1-12)
	dir=$RSIM_CACHE/build/uml-$RSIM_KSRC_ID-$kind-$hash
	RSIM_KBUILD=$dir/obj
	RSIM_MODROOT=$dir/modroot
	RSIM_KVER=$(kernel_version "$RSIM_KSRC")
	if [ -f "$dir/.complete" ]; then
		stage "UML $kind kernel: cached ($dir)"
		return
	fi
	$SUDO mkdir -p "$RSIM_KBUILD"
	$SUDO chown "$(id -u)" "$dir" "$RSIM_KBUILD"
	log=$dir/build.log
	stage "configuring UML $kind kernel ($RSIM_KVER)"
	make -s -C "$RSIM_KSRC" ARCH=um O="$RSIM_KBUILD" defconfig >"$log" 2>&1
	# shellcheck disable=SC2086
	"$RSIM_KSRC/scripts/kconfig/merge_config.sh" -m -O "$RSIM_KBUILD" \
		"$RSIM_KBUILD/.config" $frags >>"$log" 2>&1
	make -s -C "$RSIM_KSRC" ARCH=um O="$RSIM_KBUILD" olddefconfig >>"$log" 2>&1
	rsim_check_config "$RSIM_KBUILD/.config" $frags
	stage "building UML $kind kernel on $(nproc) CPUs (about 12 min cold)"
	run_with_ticker "kernel build" "$log" \
		make -C "$RSIM_KSRC" ARCH=um O="$RSIM_KBUILD" -j"$(nproc)" all
	run_with_ticker "modules_install" "$dir/modules.log" \
		make -C "$RSIM_KSRC" ARCH=um O="$RSIM_KBUILD" \
		INSTALL_MOD_PATH="$RSIM_MODROOT" modules_install
	touch "$dir/.complete"
	stage "UML $kind kernel built"
}

# Every option a fragment asks for must have survived olddefconfig.
rsim_check_config() {
	local cfg=$1 f line opt want
	shift
	for f in "$@"; do
		while read -r line; do
			case "$line" in
			CONFIG_*=*)
				opt=${line%%=*}
				want=${line#*=}
				if [ "$want" = n ]; then
					! grep -q "^$opt=" "$cfg" ||
						die "$opt: wanted n, got $(grep "^$opt=" "$cfg")"
				else
					grep -qx "$opt=$want" "$cfg" ||
						die "$opt=$want did not survive olddefconfig ($f)"
				fi
				;;
			esac
		done <"$f"
	done
}

# rsim_prepare_uml <series>: a UML tree of linux-source-<series>,
# configured from kunit/configs/uml-compile.config and only prepared for
# external modules (no vmlinux, no Module.symvers): enough to compile
# rdmasim against it. Sets RSIM_PREPARED (RSIM_KSRC is left alone);
# cached like the full builds. KSRC= does not apply here.
rsim_prepare_uml() {
	local series=$1 frag=$RSIM_TOP/kunit/configs/uml-compile.config hash dir
	local RSIM_KSRC RSIM_KSRC_ID	# the caller's tree stays current
	KSRC= rsim_fetch_source "$series"
	hash=$( (cat "$frag"; echo "$RSIM_KSRC_ID"; gcc --version | head -1) |
		sha256sum | cut -c1-12)
	dir=$RSIM_CACHE/build/uml-$RSIM_KSRC_ID-prepared-$hash
	RSIM_PREPARED=$dir/obj
	if [ -f "$dir/.complete" ]; then
		stage "UML $series prepared tree: cached"
		return
	fi
	$SUDO mkdir -p "$RSIM_PREPARED"
	$SUDO chown "$(id -u)" "$dir" "$RSIM_PREPARED"
	{
		make -s -C "$RSIM_KSRC" ARCH=um O="$RSIM_PREPARED" defconfig &&
		"$RSIM_KSRC/scripts/kconfig/merge_config.sh" -m -O "$RSIM_PREPARED" \
			"$RSIM_PREPARED/.config" "$frag" &&
		make -s -C "$RSIM_KSRC" ARCH=um O="$RSIM_PREPARED" olddefconfig
	} >"$dir/prepare.log" 2>&1 || die "configuring UML $series failed"
	rsim_check_config "$RSIM_PREPARED/.config" "$frag"
	run_with_ticker "modules_prepare" "$dir/prepare.log" \
		make -C "$RSIM_KSRC" ARCH=um O="$RSIM_PREPARED" -j"$(nproc)" modules_prepare
	touch "$dir/.complete"
	stage "UML $series tree prepared"
}

# rsim_build_modules <kdir> <arch> <name> [make args...]: build the
# modules out of the source tree, in $RSIM_OUT/build/<name>, so that builds
# for different kernels never share objects. Sets RSIM_MODDIR; the build
# output is in $RSIM_MODDIR.log. Fails on any warning, unless
# RSIM_WARN_OK=1 (a user's own kernel: the warnings are shown).
rsim_build_modules() {
	local kdir=$1 arch=$2 name=$3 warn
	shift 3
	RSIM_MODDIR=$RSIM_OUT/build/$name
	rm -rf "$RSIM_MODDIR"
	mkdir -p "$RSIM_MODDIR"
	(cd "$RSIM_TOP" && git ls-files -co --exclude-standard -z |
		xargs -0 cp --parents -t "$RSIM_MODDIR")
	make -C "$RSIM_MODDIR" KDIR="$kdir" ARCH="$arch" W=1 "$@" \
		>"$RSIM_MODDIR.log" 2>&1 || {
		tail -30 "$RSIM_MODDIR.log" >&2
		die "module build against $name failed"
	}
	# a prepared-only tree has no Module.symvers: modpost can only list
	# the RDMA core's symbols as unresolved (KBUILD_MODPOST_WARN=1)
	warn=$(grep -E "warning:|error:|\*\*\*" "$RSIM_MODDIR.log" |
	       grep -v "^WARNING: modpost: " || true)
	if [ -n "$warn" ]; then
		echo "$warn" >&2
		[ "${RSIM_WARN_OK:-0}" = 1 ] || die "module build against $name warns"
		stage "modules built against $name, W=1 $*: with the warnings above"
		return
	fi
	stage "modules built against $name, W=1 $*: no warnings"
}

# rsim_stock_headers: install Debian 12's stock kernel headers
# (linux-headers-amd64 from bookworm) and set RSIM_STOCK_KDIR.
rsim_stock_headers() {
	local pkg
	rsim_apt_update bookworm "deb bookworm main"
	# shellcheck disable=SC2046
	DEBIAN_FRONTEND=noninteractive $SUDO apt-get -q -y $(rsim_apt_opts bookworm) \
		install linux-headers-amd64 >/dev/null || die "installing linux-headers-amd64 failed"
	# shellcheck disable=SC2046
	pkg=$(apt-cache $(rsim_apt_opts bookworm) depends linux-headers-amd64 |
	      awk '/Depends: linux-headers-/ { print $2; exit }')
	RSIM_STOCK_KDIR=/usr/src/${pkg}
	[ -f "$RSIM_STOCK_KDIR/Makefile" ] || die "no $RSIM_STOCK_KDIR"
	stage "stock headers: $pkg"
}

# rsim_uml_ready <debug|bench> <name>: everything a UML run needs, from a
# fresh machine: host packages, linux-source-7.3, the UML kernel of that
# kind, and the modules built against it; exports what run-uml.sh reads.
rsim_uml_ready() {
	mkdir -p "$RSIM_OUT"
	"$RSIM_TOP/scripts/setup-host.sh"
	rsim_fetch_source 7.3
	rsim_build_uml "$1"
	rsim_build_modules "$RSIM_KBUILD" um "$2"
	export RSIM_KBUILD RSIM_MODROOT RSIM_KVER RSIM_MODDIR
}
