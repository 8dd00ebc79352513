#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# shellcheck shell=bash
#
# rdmasim: rdma-core (libibverbs, its providers, the ibv_* tools, pyverbs
# and tests/run_tests.py) from Debian's rdma-core source package of sid,
# built in place (cmake -DIN_PLACE=1, ninja) under
# $RSIM_CACHE/rdma-core/<version>/, for the rdmasim provider to be built
# against and for the tools to run in the UML boot. Run it, or source it
# after lib.sh (it uses RSIM_TOP, RSIM_CACHE, SUDO, stage, die and
# rsim_apt_*).
#
#   scripts/build-rdma-core.sh [build]	fetch and build; print the environment
#   scripts/build-rdma-core.sh smoke [log]	also boot UML (script mode) and run
#					ibv_devices and ibv_devinfo in it
#
#   rsim_rdma_core_fetch	-> RSIM_RDMA_CORE_VER, RSIM_RDMA_CORE_SRC,
#				   RSIM_RDMA_CORE_DIR (RSIM_RDMA_CORE_SRC=
#				   <unpacked tree> overrides the fetch)
#   rsim_rdma_core_deps		the build dependencies (setup-host.sh)
#   rsim_rdma_core_build	-> RSIM_RDMA_CORE_BUILD (cached by a stamp)
#   rsim_perftest		-> RSIM_RDMA_CORE_PERFTEST (perftest's programs
#				   built against it, cached by a stamp)
#   rsim_rdma_core_env		-> the RSIM_RDMA_CORE_* paths, exported, and
#				   written to <build>/rsim-env.sh
#   rsim_rdma_core		all five
#   rsim_rdma_core_smoke log	the UML boot (needs rsim_uml_ready's env)
#
# The build is IN_PLACE: its libibverbs reads the .driver files of
# <build>/etc/libibverbs.d and loads providers from <build>/lib (both
# compiled in; there is no variable for the configuration directory), and
# its programs carry a RUNPATH to <build>/lib. RDMAV_DRIVERS (IBV_DRIVERS
# is the old name) adds providers: a list, separated by ':' or ';', of
# names (lib<name>-rdmav<N>.so in <build>/lib, then the library search
# path) or absolute paths without the "-rdmav<N>.so" suffix; it is ignored
# in setuid programs. A provider must be built against the same rdma-core
# (its private ABI, IBVERBS_PRIVATE_<N>, is checked when it loads).
# Documentation/testing.rst, "rdma-core", has the rest.

# The Debian version: the newest 65.x that sid offers, else sid's newest.
RSIM_RDMA_CORE_SERIES=${RSIM_RDMA_CORE_SERIES:-65}

# The cmake options; they are part of the build's cache key. The Debian
# interpreter is named, so that a python3 elsewhere on PATH (without
# Cython) does not silently turn pyverbs off. -O1 without debug info: the
# build is a test tool here, and its Cython-generated pyverbs is most of
# the compile; 188 CPU seconds instead of about 305 (RelWithDebInfo, -O2
# -g), on the critical path of a cold make check. -DNDEBUG as in
# rdma-core's own Release flags, which packagers use: the providers'
# assertions are off, as on the users' machines (with them on, siw's
# provider aborts in every ibv_destroy_qp: Documentation/ulps.rst,
# Findings).
RSIM_RDMA_CORE_CMAKE="-GNinja -DIN_PLACE=1 -DNO_MAN_PAGES=1 -DENABLE_STATIC=0
	-DCMAKE_BUILD_TYPE=Release -DCMAKE_C_FLAGS_RELEASE=-O1 -DCMAKE_C_FLAGS=-DNDEBUG
	-DPYTHON_EXECUTABLE=/usr/bin/python3"

# The build dependencies are host packages (setup-host.sh's list), so
# that a job of make check in the background (the stock boots' rsim_stress)
# can build rdma-core without installing anything; alone, this script
# installs them through setup-host.sh.
rsim_rdma_core_deps() {
	"$RSIM_TOP/scripts/setup-host.sh"
}

# rsim_sid_source package version dir src: sid's source package
# <package>=<version> downloaded into <dir>/dl and unpacked as <src>:
# Debian's patches applied when the mirror serves the .dsc; else the orig
# tarball alone, checked against the index's SHA256 (apt checks each file
# it downloads against the signed index; a mirror may lack the Debian
# parts, so a failed download is judged by what arrived).
rsim_sid_source() {
	local pkg=$1 ver=$2 dir=$3 src=$4 dl=$3/dl tmp orig sum top
	stage "fetching $pkg $ver (sid source package)"
	$SUDO mkdir -p "$dl"
	$SUDO chown "$(id -u)" "$dir" "$dl"
	# shellcheck disable=SC2046
	(cd "$dl" && apt-get -q $(rsim_apt_opts rdma-core) source --download-only \
		"$pkg=$ver" >"$dir/fetch.log" 2>&1) || true
	rm -rf "$src"
	if [ -f "$dl/${pkg}_$ver.dsc" ] && ls "$dl/${pkg}_$ver".debian.tar.* >/dev/null 2>&1; then
		dpkg-source -x "$dl/${pkg}_$ver.dsc" "$src" \
			>>"$dir/fetch.log" 2>&1 || die "dpkg-source -x failed (log: $dir/fetch.log)"
		stage "$pkg $ver unpacked with Debian's patches"
		return
	fi
	orig=$(find "$dl" -maxdepth 1 -name "${pkg}_${ver%-*}.orig.tar.*" | head -1)
	[ -n "$orig" ] || {
		tail -5 "$dir/fetch.log" >&2
		die "fetching $pkg $ver failed (log: $dir/fetch.log)"
	}
	# shellcheck disable=SC2046
	sum=$(apt-cache $(rsim_apt_opts rdma-core) showsrc "$pkg" |
	      awk -v v="$ver" -v f="$(basename "$orig")" '
		/^Version:/ { ok = $2 == v } /^Checksums-Sha256:/ { s = 1; next }
		/^[^ ]/ { s = 0 } ok && s && $3 == f { print $1; exit }')
	if [ -z "$sum" ] || ! echo "$sum  $orig" | sha256sum -c --quiet >/dev/null; then
		die "$(basename "$orig"): SHA256 does not match sid's index"
	fi
	tmp=$(mktemp -d "$dir/x.XXXXXX")
	tar -C "$tmp" -xf "$orig"
	# shellcheck disable=SC2012 # the one directory the tarball holds
	top=$(ls -d "$tmp"/*/ | head -1)
	mv "$top" "$src"
	rm -rf "$tmp"
	stage "$pkg $ver: the mirror has no .dsc/.debian.tar; unpacked" \
		"the upstream tarball $(basename "$orig") alone"
}

# rsim_rdma_core_fetch: unpack the source package once per version into
# $RSIM_CACHE/rdma-core/<version>/src (rsim_sid_source).
rsim_rdma_core_fetch() {
	local ver dir
	# a tree of the caller's; not this script's own, which an earlier
	# call (or its rsim-env.sh) exported under the same name
	case ${RSIM_RDMA_CORE_SRC:-} in
	"$RSIM_CACHE"/rdma-core/*/src) RSIM_RDMA_CORE_SRC= ;;
	esac
	if [ -n "${RSIM_RDMA_CORE_SRC:-}" ]; then
		[ -f "$RSIM_RDMA_CORE_SRC/libibverbs/verbs.h" ] ||
			die "RSIM_RDMA_CORE_SRC=$RSIM_RDMA_CORE_SRC is not an rdma-core tree"
		RSIM_RDMA_CORE_SRC=$(cd "$RSIM_RDMA_CORE_SRC" && pwd)
		ver=$(awk -F'"' '/set\(PACKAGE_VERSION/ { print $2 }' \
		      "$RSIM_RDMA_CORE_SRC/CMakeLists.txt")
		RSIM_RDMA_CORE_VER=local-$ver-$(echo "$RSIM_RDMA_CORE_SRC" |
						 sha256sum | cut -c1-8)
		RSIM_RDMA_CORE_DIR=$RSIM_CACHE/rdma-core/$RSIM_RDMA_CORE_VER
		stage "rdma-core source: $RSIM_RDMA_CORE_SRC ($ver, RSIM_RDMA_CORE_SRC)"
		return
	fi
	rsim_apt_update rdma-core "deb-src sid main"
	# shellcheck disable=SC2046
	ver=$(apt-cache $(rsim_apt_opts rdma-core) showsrc rdma-core |
	      awk '/^Version:/ { print $2 }' | sort -V)
	[ -n "$ver" ] || die "rdma-core is not in sid's source index"
	if echo "$ver" | grep -q "^$RSIM_RDMA_CORE_SERIES\."; then
		ver=$(echo "$ver" | grep "^$RSIM_RDMA_CORE_SERIES\." | tail -1)
	else
		ver=$(echo "$ver" | tail -1)
		stage "sid has no rdma-core $RSIM_RDMA_CORE_SERIES.x: taking $ver"
	fi
	RSIM_RDMA_CORE_VER=$ver
	dir=$RSIM_CACHE/rdma-core/$ver
	RSIM_RDMA_CORE_DIR=$dir
	RSIM_RDMA_CORE_SRC=$dir/src
	if [ -f "$dir/.src-complete" ]; then
		stage "rdma-core source: $ver (cached)"
		return
	fi
	rsim_sid_source rdma-core "$ver" "$dir" "$RSIM_RDMA_CORE_SRC"
	[ -f "$RSIM_RDMA_CORE_SRC/libibverbs/verbs.h" ] ||
		die "$RSIM_RDMA_CORE_SRC is not an rdma-core tree"
	touch "$dir/.src-complete"
}

# rsim_rdma_core_build: cmake and ninja into <dir>/build, skipped when its
# stamp holds the same key (version, cmake options, source path, compiler);
# a different key is a clean build (about a minute on two CPUs).
rsim_rdma_core_build() {
	local b=$RSIM_RDMA_CORE_DIR/build key log t0
	key=$(printf '%s\n' "$RSIM_RDMA_CORE_VER" "$RSIM_RDMA_CORE_SRC" \
		"$RSIM_RDMA_CORE_CMAKE" "$(gcc --version | head -1)" \
		"$(cmake --version | head -1)" | sha256sum | cut -c1-16)
	RSIM_RDMA_CORE_BUILD=$b
	if [ -f "$b/.rsim-stamp" ] && [ "$(cat "$b/.rsim-stamp")" = "$key" ]; then
		stage "rdma-core build: cached ($b)"
		return
	fi
	$SUDO mkdir -p "$RSIM_RDMA_CORE_DIR"
	$SUDO chown "$(id -u)" "$RSIM_RDMA_CORE_DIR"
	rm -rf "$b"
	mkdir -p "$b"
	log=$RSIM_RDMA_CORE_DIR/build.log
	t0=$(date +%s)
	stage "building rdma-core $RSIM_RDMA_CORE_VER: cmake, ninja -j${RSIM_RDMA_CORE_JOBS:-$(nproc)}"
	# shellcheck disable=SC2086 # the options: words on purpose
	(cd "$b" && cmake $RSIM_RDMA_CORE_CMAKE "$RSIM_RDMA_CORE_SRC") >"$log" 2>&1 || {
		tail -20 "$log" >&2
		die "cmake for rdma-core failed (log: $log)"
	}
	grep -q "cython NOT found" "$log" &&
		stage "warning: no Cython for /usr/bin/python3: pyverbs is not built"
	run_with_ticker "ninja" "$log.ninja" \
		ninja -C "$b" -j"${RSIM_RDMA_CORE_JOBS:-$(nproc)}"
	cat "$log.ninja" >>"$log" && rm -f "$log.ninja"
	if [ ! -x "$b/bin/ibv_devinfo" ] || [ ! -e "$b/lib/libibverbs.so.1" ]; then
		die "the rdma-core build has no ibv_devinfo or libibverbs (log: $log)"
	fi
	echo "$key" >"$b/.rsim-stamp"
	stage "rdma-core $RSIM_RDMA_CORE_VER built in $(( $(date +%s) - t0 )) s"
}

# perftest's programs built (the make check boots run ib_write_bw -R,
# make bench the latencies and bandwidths; the rest are cheap): sid's perftest, whose rdma_cm mode takes an IPv6
# address (--ipv6-addr; Debian 12's 4.5 resolves IPv4 only)
RSIM_PERFTEST_PROGS="ib_write_bw ib_read_bw ib_send_bw ib_write_lat ib_send_lat"

# rsim_perftest: sid's newest perftest, unpacked once into
# <rdma-core dir>/perftest-<version>/src and built out of tree in its
# build/ against this rdma-core build (its headers, and a RUNPATH to its
# libraries); skipped when the stamp holds the same key (the version, the
# rdma-core build's key, the programs). About 20 s; needs libpci's headers.
rsim_perftest() {
	local ver dir b key log
	rsim_apt_update rdma-core "deb-src sid main"
	# shellcheck disable=SC2046
	ver=$(apt-cache $(rsim_apt_opts rdma-core) showsrc perftest |
	      awk '/^Version:/ { print $2 }' | sort -V | tail -1)
	[ -n "$ver" ] || die "perftest is not in sid's source index"
	dir=$RSIM_RDMA_CORE_DIR/perftest-$ver
	b=$dir/build
	RSIM_RDMA_CORE_PERFTEST=$b
	key=$(printf '%s\n' "$ver" "$(cat "$RSIM_RDMA_CORE_BUILD/.rsim-stamp")" \
		"$RSIM_PERFTEST_PROGS" | sha256sum | cut -c1-16)
	if [ -f "$b/.rsim-stamp" ] && [ "$(cat "$b/.rsim-stamp")" = "$key" ]; then
		stage "perftest build: cached ($b)"
		return
	fi
	mkdir -p "$dir"
	if [ ! -f "$dir/.src-complete" ]; then
		rsim_sid_source perftest "$ver" "$dir" "$dir/src"
		[ -x "$dir/src/configure" ] || die "$dir/src is not a perftest tree"
		touch "$dir/.src-complete"
	fi
	rm -rf "$b"
	mkdir -p "$b"
	log=$dir/build.log
	stage "building perftest $ver ($RSIM_PERFTEST_PROGS)"
	# shellcheck disable=SC2086 # one word per program
	(cd "$b" && "$dir/src/configure" -q CPPFLAGS="-I$RSIM_RDMA_CORE_BUILD/include" \
		LDFLAGS="-L$RSIM_RDMA_CORE_BUILD/lib -Wl,-rpath,$RSIM_RDMA_CORE_BUILD/lib" &&
		make -s -j"$(nproc)" $RSIM_PERFTEST_PROGS) >"$log" 2>&1 || {
		tail -20 "$log" >&2
		die "building perftest failed (log: $log)"
	}
	echo "$key" >"$b/.rsim-stamp"
}

# rsim_rdma_core_env: where the build's parts are, exported and written
# to <build>/rsim-env.sh (for "." in other scripts and in the UML boot).
rsim_rdma_core_env() {
	local b=$RSIM_RDMA_CORE_BUILD pabi v
	pabi=$(awk '/define IBVERBS_PABI_VERSION/ { print $3 }' "$b/include/config.h" 2>/dev/null)
	RSIM_RDMA_CORE_LIB=$b/lib			# libibverbs.so.1, providers
	RSIM_RDMA_CORE_BIN=$b/bin			# ibv_*, run_tests.py, ...
	RSIM_RDMA_CORE_ETC=$b/etc/libibverbs.d		# the .driver files read
	RSIM_RDMA_CORE_INCLUDE=$b/include		# infiniband/verbs.h, driver.h
	RSIM_RDMA_CORE_PYTHONPATH=$b/python		# pyverbs
	# RSIM_RDMA_CORE_PERFTEST: perftest's programs (rsim_perftest)
	RSIM_RDMA_CORE_PABI=$pabi			# lib<name>-rdmav<PABI>.so
	RSIM_RDMA_CORE_PYVERBS=0
	ls "$b"/python/pyverbs/device.*so >/dev/null 2>&1 && RSIM_RDMA_CORE_PYVERBS=1
	export RSIM_RDMA_CORE_VER RSIM_RDMA_CORE_SRC RSIM_RDMA_CORE_BUILD \
		RSIM_RDMA_CORE_LIB RSIM_RDMA_CORE_BIN RSIM_RDMA_CORE_ETC \
		RSIM_RDMA_CORE_INCLUDE RSIM_RDMA_CORE_PYTHONPATH \
		RSIM_RDMA_CORE_PABI RSIM_RDMA_CORE_PYVERBS RSIM_RDMA_CORE_PERFTEST
	{
		echo "# rdma-core $RSIM_RDMA_CORE_VER, built by scripts/build-rdma-core.sh"
		for v in VER SRC BUILD LIB BIN ETC INCLUDE PYTHONPATH PABI PYVERBS \
			 PERFTEST; do
			eval "echo \"RSIM_RDMA_CORE_$v='\$RSIM_RDMA_CORE_$v'\""
		done
		echo "export RSIM_RDMA_CORE_VER RSIM_RDMA_CORE_SRC RSIM_RDMA_CORE_BUILD" \
		     "RSIM_RDMA_CORE_LIB RSIM_RDMA_CORE_BIN RSIM_RDMA_CORE_ETC" \
		     "RSIM_RDMA_CORE_INCLUDE RSIM_RDMA_CORE_PYTHONPATH" \
		     "RSIM_RDMA_CORE_PABI RSIM_RDMA_CORE_PYVERBS RSIM_RDMA_CORE_PERFTEST"
	} >"$b/rsim-env.sh"
}

rsim_rdma_core() {
	rsim_rdma_core_deps
	rsim_lock rdma-core
	rsim_rdma_core_fetch
	rsim_rdma_core_build
	rsim_perftest
	rsim_rdma_core_env
	rsim_unlock
}

# rsim_rdma_core_smoke <log>: one short UML boot (script mode, peers up)
# running scripts/guest/rdma-core-smoke.sh; needs rsim_uml_ready's environment.
rsim_rdma_core_smoke() {
	local log=$1
	stage "UML boot: ibv_devices and ibv_devinfo from rdma-core $RSIM_RDMA_CORE_VER"
	RSIM_UML_TIMEOUT=${RSIM_UML_TIMEOUT:-300} \
	RSIM_UML_ARGS="${RSIM_UML_ARGS:-} RSIM_SCRIPT=$RSIM_TOP/scripts/guest/rdma-core-smoke.sh
		RSIM_RDMA_CORE_ENV=$RSIM_RDMA_CORE_BUILD/rsim-env.sh" \
		"$RSIM_TOP/scripts/boot-uml.sh" script "$log"
	grep "RSIM-RDMA-CORE" "$log" || die "no RSIM-RDMA-CORE lines in $log"
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
	set -euo pipefail
	# shellcheck source=lib.sh
	. "$(dirname "$0")/lib.sh"
	rsim_rdma_core
	case "${1:-build}" in
	build)
		cat "$RSIM_RDMA_CORE_BUILD/rsim-env.sh"
		;;
	smoke)
		# lib-kernel.sh sources this file: not followed, or shellcheck
		# would go round the cycle for ever
		# shellcheck source=/dev/null
		. "$RSIM_TOP/scripts/lib-kernel.sh"
		rsim_uml_ready debug uml-7.3
		mkdir -p "$RSIM_OUT"
		rsim_rdma_core_smoke "${2:-$RSIM_OUT/rdma-core-smoke.log}"
		;;
	*)
		die "usage: $0 [build | smoke [log]]"
		;;
	esac
fi
