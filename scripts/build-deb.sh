#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Copyright (c) 2026 The virtio-stellar authors
#
# make deb: build the Debian packages (debian/) from a copy of the source
# in build/deb/virtio-stellar-VERSION/, so the tree itself stays clean,
# then check them with lintian (any error fails).  The .debs land in
# build/deb/.  STELLAR_DEB_DIR overrides build/deb.
#
# The copy holds the files git tracks plus new ones it does not ignore
# (with their working-tree content), or, outside a git checkout, the tree
# without build/.
set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)
OUT=${STELLAR_DEB_DIR:-$REPO/build/deb}
VERSION=$(dpkg-parsechangelog -l "$REPO/debian/changelog" -S Version)
SRC=$OUT/virtio-stellar-$VERSION

rm -rf "$OUT"
mkdir -p "$SRC"
if git -C "$REPO" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
	# Tracked files deleted in the work tree are left out.
	(cd "$REPO" && git ls-files -z --cached --others --exclude-standard |
		while IFS= read -r -d '' f; do
			[ -e "$f" ] && printf '%s\0' "$f"
		done | tar --null -T - -cf -) | tar -xf - -C "$SRC"
else
	tar -C "$REPO" --exclude=./build -cf - . | tar -xf - -C "$SRC"
fi

(cd "$SRC" && dpkg-buildpackage -b -us -uc -J"$(nproc)")
ls -l "$OUT"/*.deb
lintian --fail-on error --display-info "$OUT"/virtio-stellar_"${VERSION}"_*.changes
