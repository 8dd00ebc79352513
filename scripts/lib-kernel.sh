# SPDX-License-Identifier: GPL-2.0-only
# shellcheck shell=bash
# rdmasim: fetch Debian kernel sources and build the UML test kernel, both
# cached under $RSIM_CACHE so that later runs skip them. Sourced after
# lib.sh, whose RSIM_TOP, RSIM_CACHE, RSIM_OUT, SUDO, stage, die,
# run_with_ticker, kernel_version and rsim_apt_* it uses.
#
#   rsim_fetch_source 7.3	-> RSIM_KSRC, RSIM_KSRC_ID (KSRC= overrides)
#   rsim_uml_tree kind target fragment...	-> RSIM_TREE
#   rsim_build_uml debug|bench [series]	-> RSIM_KBUILD, RSIM_MODROOT, RSIM_KVER
#   rsim_build_modules kdir arch name [make args]	-> RSIM_MODDIR
#   rsim_stock_headers		-> RSIM_STOCK_KDIR
#   rsim_uml_ready debug|bench name	-> all of the UML ones, exported,
#				   and RSIM_RDMA_CORE_ENV (build-rdma-core.sh's)
#
# RSIM_SERIES picks the kernel series of rsim_build_uml and rsim_uml_ready
# (default 7.3, the one make check boots; 6.12 for make check-6.12).

# shellcheck source=build-rdma-core.sh
. "$RSIM_TOP/scripts/build-rdma-core.sh"

# rsim_fetch_source <series>: unpack linux-source-<series> once per
# Debian package version, with kunit/patches/<series>/*.patch applied
# where the series has some (6.12: its UML on hosts with a large XSAVE
# area). A patched tree is a source of its own: its directory and
# RSIM_KSRC_ID, and so every tree built from it, carry a hash of the
# patches' diffs (from each one's first "--- " line: a reworded commit
# message rebuilds nothing).
rsim_fetch_source() {
	local series=$1 ver dir tarball tmp p phash=''
	local patches=("$RSIM_TOP"/kunit/patches/"$series"/*.patch)
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
	if [ -z "$ver" ] || [ "$ver" = "(none)" ]; then
		die "linux-source-$series is not in the Debian archive"
	fi
	[ -f "${patches[0]}" ] || patches=()
	[ ${#patches[@]} = 0 ] || phash=+rsim-$(for p in "${patches[@]}"; do
		sed -n '/^--- /,$p' "$p"; done | sha256sum | cut -c1-8)
	dir=$RSIM_CACHE/src/linux-source-$series-$ver$phash
	RSIM_KSRC=$dir/linux-source-$series
	RSIM_KSRC_ID="$series-$ver$phash"
	rsim_lock "src-$RSIM_KSRC_ID"
	if [ -f "$dir/.complete" ]; then
		rsim_unlock
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
	for p in "${patches[@]}"; do
		stage "applying ${p#"$RSIM_TOP"/}"
		$SUDO patch -s -p1 -d "$RSIM_KSRC" <"$p" || die "$p does not apply"
	done
	$SUDO touch "$dir/.complete"
	rsim_unlock
}

# rsim_uml_tree <kind> <target> <fragment>...: the one place a UML tree
# of $RSIM_KSRC is configured and built: make ARCH=um defconfig, the
# fragments merged over it, olddefconfig, every option they ask for
# checked, then "make <target>" ("all" also installs the modules). The
# tree is $RSIM_CACHE/build/uml-<source id>-<kind>-<hash>/, cached by a
# hash of the fragments' options (their lines less comments and blank
# lines, in order: a comment edited is not a new 12-minute build), the
# source id and the compiler. Sets RSIM_TREE to that directory.
rsim_uml_tree() {
	local kind=$1 target=$2 hash dir log f
	shift 2
	hash=$( (for f in "$@"; do
			grep -v -e '^#' -e '^[[:space:]]*$' "$f"
			echo --
		done
		echo "$RSIM_KSRC_ID"
		gcc --version | head -1) | sha256sum | cut -c1-12)
	dir=$RSIM_CACHE/build/uml-$RSIM_KSRC_ID-$kind-$hash
	RSIM_TREE=$dir
	rsim_lock "${dir##*/}"
	if [ -f "$dir/.complete" ]; then
		rsim_unlock
		stage "UML $kind tree: cached ($dir)"
		return
	fi
	$SUDO mkdir -p "$dir/obj"
	$SUDO chown "$(id -u)" "$dir" "$dir/obj"
	log=$dir/build.log
	stage "configuring UML $kind tree ($(kernel_version "$RSIM_KSRC"))"
	{
		make -s -C "$RSIM_KSRC" ARCH=um O="$dir/obj" defconfig &&
		"$RSIM_KSRC/scripts/kconfig/merge_config.sh" -m -O "$dir/obj" \
			"$dir/obj/.config" "$@" &&
		make -s -C "$RSIM_KSRC" ARCH=um O="$dir/obj" olddefconfig
	} >"$log" 2>&1 || die "configuring UML $kind failed (log: $log)"
	rsim_check_config "$dir/obj/.config" "$@"
	stage "building UML $kind tree: make $target on $(nproc) CPUs"
	run_with_ticker "make $target" "$log" \
		make -C "$RSIM_KSRC" ARCH=um O="$dir/obj" -j"$(nproc)" "$target"
	if [ "$target" = all ]; then
		run_with_ticker "modules_install" "$dir/modules.log" \
			make -C "$RSIM_KSRC" ARCH=um O="$dir/obj" \
			INSTALL_MOD_PATH="$dir/modroot" modules_install
	fi
	touch "$dir/.complete"
	rsim_unlock
	stage "UML $kind tree built"
}

# rsim_build_uml <debug|bench> [series]: the UML kernel of $RSIM_KSRC
# (rsim_fetch_source <series> first) from kunit/configs/uml-base.config
# plus uml-<kind>.config, uml-<series>.config where the series has one
# (7.3, the default, has none), and uml-<kind>-<series>.config last where
# that tree has one (7.3's debug kernel: the ULPs of
# Documentation/ulps.rst), built and its modules installed. Sets
# RSIM_KBUILD, RSIM_MODROOT and RSIM_KVER.
rsim_build_uml() {
	local kind=$1 series=${2:-${RSIM_SERIES:-7.3}}
	local cfg=$RSIM_TOP/kunit/configs
	local frags=("$cfg/uml-base.config" "$cfg/uml-$kind.config")
	[ -f "$cfg/uml-$series.config" ] && frags+=("$cfg/uml-$series.config")
	[ -f "$cfg/uml-$kind-$series.config" ] &&
		frags+=("$cfg/uml-$kind-$series.config")
	rsim_uml_tree "$kind" all "${frags[@]}"
	RSIM_KBUILD=$RSIM_TREE/obj
	RSIM_MODROOT=$RSIM_TREE/modroot
	RSIM_KVER=$(kernel_version "$RSIM_KSRC")
}

# Every option the fragments ask for must have survived olddefconfig;
# where two fragments set one option, the later one wins (as in
# merge_config.sh), e.g. uml-6.12.config over uml-base.config.
rsim_check_config() {
	local cfg=$1 f line opt want
	local -A wants=() from=()
	local order=()
	shift
	for f in "$@"; do
		while read -r line; do
			case "$line" in
			CONFIG_*=*)
				opt=${line%%=*}
				[ -n "${wants[$opt]+set}" ] || order+=("$opt")
				wants[$opt]=${line#*=}
				from[$opt]=$f
				;;
			esac
		done <"$f"
	done
	for opt in "${order[@]}"; do
		want=${wants[$opt]}
		if [ "$want" = n ]; then
			! grep -q "^$opt=" "$cfg" ||
				die "$opt: wanted n, got $(grep "^$opt=" "$cfg") (${from[$opt]})"
		else
			grep -qx "$opt=$want" "$cfg" ||
				die "$opt=$want did not survive olddefconfig (${from[$opt]})"
		fi
	done
}

# rsim_build_modules <kdir> <arch> <name> [make args...]: build the
# modules out of the source tree, in $RSIM_OUT/build/<name>, so that builds
# for different kernels never share objects. Sets RSIM_MODDIR; the build
# output is in $RSIM_MODDIR.log. Fails on any warning, unless
# RSIM_WARN_OK=1 (a user's own kernel: the warnings are shown). With
# RSIM_CHROOT=<dir> (a Debian 13 root, scripts/lib-stock.sh) the build runs
# in that root, in <dir>/build/<name>, and kdir is a path inside it.
rsim_build_modules() {
	local kdir=$1 arch=$2 name=$3 warn run=
	shift 3
	RSIM_MODDIR=$RSIM_OUT/build/$name
	if [ -n "${RSIM_CHROOT:-}" ]; then
		RSIM_MODDIR=$RSIM_CHROOT/build/$name
		run="rsim_in_root $RSIM_CHROOT"
	fi
	rm -rf "$RSIM_MODDIR"
	mkdir -p "$RSIM_MODDIR"
	# a copy is not a clone: scripts/version.sh reads .version there
	sh "$RSIM_TOP/scripts/version.sh" "$RSIM_TOP" >"$RSIM_MODDIR/.version"
	(cd "$RSIM_TOP" && git ls-files -co --exclude-standard -z |
		xargs -0 cp --parents -t "$RSIM_MODDIR")
	$run make -C "${RSIM_MODDIR#"${RSIM_CHROOT:-}"}" -j"$(nproc)" KDIR="$kdir" \
		ARCH="$arch" W=1 "$@" >"$RSIM_MODDIR.log" 2>&1 || {
		# a parallel build's compiler errors scroll past its last lines
		grep -E -A3 "error:" "$RSIM_MODDIR.log" | head -40 >&2 || true
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

# rsim_in_root <root> cmd...: cmd run chrooted in <root>, with /proc
# mounted there meanwhile (objtool reads its limits)
rsim_in_root() {
	local root=$1 rc=0
	shift
	$SUDO mount -t proc proc "$root/proc"
	$SUDO chroot "$root" "$@" || rc=$?
	$SUDO umount "$root/proc"
	return $rc
}

# rsim_stock_headers: install Debian 12's stock kernel headers
# (linux-headers-amd64 from bookworm) and set RSIM_STOCK_KDIR; exports
# RSIM_STOCK_HEADERS, the same tree, so that the scripts it starts do not
# install them again.
rsim_stock_headers() {
	local pkg
	# installed once a run: a job make check starts reuses its tree
	if [ -n "${RSIM_STOCK_HEADERS:-}" ]; then
		RSIM_STOCK_KDIR=$RSIM_STOCK_HEADERS
		return
	fi
	rsim_apt_update bookworm "deb bookworm main"
	# shellcheck disable=SC2046
	rsim_apt_get -y $(rsim_apt_opts bookworm) install linux-headers-amd64 >/dev/null || die "installing linux-headers-amd64 failed"
	# shellcheck disable=SC2046
	pkg=$(apt-cache $(rsim_apt_opts bookworm) depends linux-headers-amd64 |
	      awk '/Depends: linux-headers-/ { print $2; exit }')
	RSIM_STOCK_KDIR=/usr/src/${pkg}
	[ -f "$RSIM_STOCK_KDIR/Makefile" ] || die "no $RSIM_STOCK_KDIR"
	RSIM_STOCK_HEADERS=$RSIM_STOCK_KDIR
	export RSIM_STOCK_HEADERS
	stage "stock headers: $pkg"
}

# rsim_uml_ready <debug|bench> <name> [make args...]: everything a UML
# run needs, from a fresh machine: host packages, linux-source-$RSIM_SERIES
# (7.3 by default), the UML kernel of that kind, and the modules built
# against it (W=1 and the make args) with the host programs of tools/umad,
# tools/rds and tools/dmah, and rdma-core 65 with tools/provider built
# against it (not with RSIM_UML_TOOLS=0: 6.12's KUnit and conformance
# boots need none of them); exports what boot-uml.sh reads.
rsim_uml_ready() {
	local kind=$1 name=$2 series=${RSIM_SERIES:-7.3} ibsim
	shift 2
	mkdir -p "$RSIM_OUT"
	"$RSIM_TOP/scripts/setup-host.sh"
	rsim_fetch_source "$series"
	rsim_build_uml "$kind" "$series"
	rsim_build_modules "$RSIM_KBUILD" um "$name" "$@"
	export RSIM_KBUILD RSIM_MODROOT RSIM_KVER RSIM_MODDIR
	if [ "${RSIM_UML_TOOLS:-1}" = 0 ]; then
		return
	fi
	# the selftest's libibumad client runs on the host's libraries
	make -C "$RSIM_MODDIR" umad >>"$RSIM_MODDIR.log" 2>&1 || {
		tail -30 "$RSIM_MODDIR.log" >&2
		die "building tools/umad failed"
	}
	# ibsim's own tests, which make fabric runs (unmodified, from
	# Debian's source package or IBSIM=)
	ibsim=$(rsim_ibsim) || exit 1
	make -C "$RSIM_MODDIR" ibsim-tests IBSIM="$ibsim" >>"$RSIM_MODDIR.log" 2>&1 || {
		tail -30 "$RSIM_MODDIR.log" >&2
		die "building ibsim's tests failed"
	}
	# the conformance boot's RDS exchange
	make -C "$RSIM_MODDIR" rds >>"$RSIM_MODDIR.log" 2>&1 || {
		tail -30 "$RSIM_MODDIR.log" >&2
		die "building tools/rds failed"
	}
	# the selftest's uverbs client, against the 7.3 tree's uapi headers
	make -C "$RSIM_MODDIR" dmah KSRC="$RSIM_KSRC" >>"$RSIM_MODDIR.log" 2>&1 || {
		tail -30 "$RSIM_MODDIR.log" >&2
		die "building tools/dmah failed"
	}
	# the libibverbs provider, against rdma-core 65 (built once, then
	# cached: under a second); the boots get its rsim-env.sh
	rsim_rdma_core
	make -C "$RSIM_MODDIR" provider >>"$RSIM_MODDIR.log" 2>&1 || {
		tail -30 "$RSIM_MODDIR.log" >&2
		die "building tools/provider failed"
	}
	RSIM_RDMA_CORE_ENV=$RSIM_RDMA_CORE_BUILD/rsim-env.sh
	export RSIM_RDMA_CORE_ENV
}
