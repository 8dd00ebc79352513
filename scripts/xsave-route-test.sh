#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# xsave-route-test.sh: proves kunit/patches/6.12/ on any x86-64 host,
# including one whose XSAVE area fits in what UML 6.12 keeps (where make
# check-6.12 cannot tell the patch from its absence). It builds UML 6.12
# (defconfig, in $RSIM_OUT/xsave/) with HOST_FP_SIZE shrunk to 832 bytes
# (x87, SSE, the XSAVE header and AVX: less than the area of any host
# with AVX-512, and of this one), so that the host's area is larger than
# UML's, as on a host with AMX, then boots it twice with a three-line
# init:
#   without the patch: PTRACE_SETREGSET must fail ("ptrace set fp regs
#	failed") and init must not run;
#   with it: the kernel must say the registers go through a buffer of the
#	host's size, and init must run and power the kernel off.
# About 10 minutes on 2 CPUs (one kernel build, then one file rebuilt).
# Uses lib.sh's RSIM_OUT, stage and die, and lib-kernel.sh's
# rsim_fetch_source (the patched 6.12 source, cached).
set -euo pipefail
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-kernel.sh"

patchfile=$RSIM_TOP/kunit/patches/6.12/0001-um-x86-fp-registers-through-host-sized-buffer.patch
regs=arch/x86/um/os-Linux/registers.c
offs=arch/x86/um/user-offsets.c
dir=$RSIM_OUT/xsave
KSRC='' rsim_fetch_source 6.12
rm -rf "$dir"
mkdir -p "$dir"
# a tree of hard links to the cached source; the two files changed here
# are written anew (sed -i, patch -R), which leaves the cache as it was
stage "UML 6.12 with HOST_FP_SIZE 832 bytes: $dir"
cp -al "$RSIM_KSRC" "$dir/src"
sed -i 's/DEFINE_LONGS(HOST_FP_SIZE, 2696);/DEFINE_LONGS(HOST_FP_SIZE, 832);/' \
	"$dir/src/$offs"
grep -q 'DEFINE_LONGS(HOST_FP_SIZE, 832);' "$dir/src/$offs" ||
	die "$offs: no HOST_FP_SIZE of 2696 to shrink"
grep -q 'registers go through a buffer' "$dir/src/$regs" ||
	die "$regs: the patch is not applied in $RSIM_KSRC"

cat >"$dir/init" <<'EOF'
#!/bin/sh
mount -t proc proc /proc
echo "RSIM-XSAVE init ran"
echo o >/proc/sysrq-trigger
EOF
chmod +x "$dir/init"

# build <name>: the UML binary of $dir/src as $dir/linux-<name>
build() {
	make -C "$dir/src" ARCH=um O="$dir/obj" -j"$(nproc)" linux \
		>>"$dir/build.log" 2>&1 || {
		tail -20 "$dir/build.log" >&2
		die "building UML 6.12 ($1) failed (log: $dir/build.log)"
	}
	cp "$dir/obj/linux" "$dir/linux-$1"
}

# boot <name>: that binary with the init above, its console in
# $dir/boot-<name>.log (a kernel that panics stops by itself, without a
# core dump here)
boot() {
	ulimit -c 0
	TMPDIR=$dir timeout -k 10 300 "$dir/linux-$1" mem=256M seccomp=on \
		rootfstype=hostfs rootflags=/ ro init="$dir/init" \
		con0=null,fd:1 con=null >"$dir/boot-$1.log" 2>&1 </dev/null || true
}

make -C "$dir/src" ARCH=um O="$dir/obj" defconfig >"$dir/build.log" 2>&1
"$dir/src/scripts/config" --file "$dir/obj/.config" -e HOSTFS -e MAGIC_SYSRQ \
	-e DEBUG_INFO_NONE -d SMP
make -C "$dir/src" ARCH=um O="$dir/obj" olddefconfig >>"$dir/build.log" 2>&1
stage "building it with the patch"
build patched
stage "and without (patch -R: registers.c alone rebuilt)"
cp "$dir/src/$regs" "$dir/registers.c"	# its own inode, not the cache's
rm "$dir/src/$regs"
mv "$dir/registers.c" "$dir/src/$regs"
patch -s -R -p1 -d "$dir/src" <"$patchfile"
grep -q 'registers go through a buffer' "$dir/src/$regs" &&
	die "$regs: patch -R left the patch in"
build unpatched

fail=0
boot unpatched
if grep -q "ptrace set fp regs failed" "$dir/boot-unpatched.log" &&
	! grep -q "RSIM-XSAVE init ran" "$dir/boot-unpatched.log"; then
	stage "without the patch: $(grep -m1 'ptrace set fp regs failed' "$dir/boot-unpatched.log"), init never ran"
else
	echo "without the patch the kernel should not have reached init" >&2
	tail -20 "$dir/boot-unpatched.log" >&2
	fail=1
fi
boot patched
if grep -q "registers go through a buffer" "$dir/boot-patched.log" &&
	grep -q "RSIM-XSAVE init ran" "$dir/boot-patched.log" &&
	! grep -q "ptrace set fp regs failed" "$dir/boot-patched.log"; then
	stage "with the patch: $(grep -m1 'registers go through a buffer' "$dir/boot-patched.log" | sed 's/^\[[^]]*\] //'); init ran"
else
	echo "with the patch the kernel should have run init" >&2
	tail -20 "$dir/boot-patched.log" >&2
	fail=1
fi
[ $fail = 0 ] || die "xsave route test failed (logs: $dir/boot-*.log)"
stage "xsave route test passed ($(grep -m1 -o 'host XSAVE area [0-9]* bytes' "$dir/boot-patched.log"))"
