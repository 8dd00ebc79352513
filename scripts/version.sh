#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
#
# version.sh [tree]: rdmasim's version string, for MODULE_VERSION(), the
# DKMS package and make install: 0.<commits>+g<abbreviated hash>, with
# ".dirty" when the work tree has changes. A tree that is not a git clone
# (a DKMS copy in /usr/src, a build copy in out/build) carries the string
# in its .version file, which make dkms-install and scripts/lib-kernel.sh's
# rsim_build_modules write.
tree=${1:-$(dirname "$0")/..}
if [ -f "$tree/.version" ]; then
	cat "$tree/.version"
	exit 0
fi
if count=$(git -C "$tree" rev-list --count HEAD 2>/dev/null); then
	hash=$(git -C "$tree" rev-parse --short=7 HEAD)
	dirty=
	git -C "$tree" diff --quiet HEAD 2>/dev/null || dirty=.dirty
	echo "0.$count+g$hash$dirty"
	exit 0
fi
echo "0.0+unknown"
