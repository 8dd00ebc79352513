#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# lint.sh <kernel source>
# checkpatch --strict, kernel-doc -Wall, and kernel-doc on every exported
# symbol; context-lint.py over the driver (a "Context: any" comment over a
# narrower lock or a sleep); Documentation/layout.rst against the tree and
# the README's length; shellcheck over scripts/ when it is installed. Any finding
# fails. (W=1 and sparse run in the builds, check.sh.) Uses lib.sh's
# RSIM_TOP.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

ksrc=$1
cd "$RSIM_TOP"
files=$(git ls-files -co --exclude-standard '*.c' '*.h')
fail=0

stage "checkpatch --strict"
# shellcheck disable=SC2086
out=$("$ksrc/scripts/checkpatch.pl" --strict --no-tree --terse --show-types \
	-f $files 2>&1 | grep -v '^total: 0 errors, 0 warnings, 0 checks' || true)
if [ -n "$out" ]; then
	echo "$out"
	fail=1
fi

stage "kernel-doc -Wall"
# shellcheck disable=SC2086
out=$("$ksrc/scripts/kernel-doc" -none -Wall $files 2>&1) || true
if [ -n "$out" ]; then
	echo "$out"
	fail=1
fi

# every exported symbol (EXPORT_SYMBOL*, including the KUnit-only
# exports) has a kernel-doc comment in its file
for f in $files; do
	# shellcheck disable=SC2013 # one C identifier per line
	for sym in $(sed -n 's/^EXPORT_SYMBOL[A-Z_]*(\([a-z_0-9]*\)).*/\1/p' "$f"); do
		if ! grep -q "^ \* $sym\( -\|()\)" "$f"; then
			echo "$f: exported $sym has no kernel-doc"
			fail=1
		fi
	done
done

# a "Context: any" comment must not hide a narrower lock or a sleep
stage "context comments"
# shellcheck disable=SC2046 # one file per word
python3 scripts/context-lint.py $(echo "$files" | grep '^drivers/.*\.c$') ||
	fail=1

# Documentation/layout.rst follows the tree (scripts/layout.py), and the
# README stays a five-minute read
stage "layout, README"
python3 scripts/layout.py --check || fail=1
readme_lines=$(wc -l <README)
if [ "$readme_lines" -gt 150 ]; then
	echo "README: $readme_lines lines, 150 at most (the rest belongs in Documentation/)"
	fail=1
fi

if command -v shellcheck >/dev/null; then
	stage "shellcheck"
	shellcheck scripts/*.sh scripts/guest/*.sh .ci/run || fail=1
fi

[ $fail = 0 ] || die "lint found problems"
stage "lint clean: checkpatch --strict, kernel-doc, context comments, layout$(command -v shellcheck >/dev/null && echo ", shellcheck")"
