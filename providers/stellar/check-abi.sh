#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Copyright (c) 2026 The virtio-stellar authors
#
# Verify the stellar provider against the installed libibverbs:
#   1. verbs_private.h and stellar.h compile on their own, which evaluates
#      every _Static_assert pinning the rdma-core v44 private layouts;
#   2. every symbol the provider imports from libibverbs (IBVERBS_PRIVATE_34,
#      or a public IBVERBS_1.x version) is exported by libibverbs.so.1 with
#      exactly that version, and verbs_register_driver_34 is among them;
#   3. the provider imports no other IBVERBS_PRIVATE_* version and no
#      unversioned strong symbol;
#   4. the provider exports no dynamic symbols (it registers through its
#      constructor only).
#
# usage: check-abi.sh [PROVIDER.so] [LIBIBVERBS.so.1]
# Exits 0 when all checks pass, 1 otherwise.

set -eu

PROVIDER=${1:-libstellar-rdmav34.so}
LIBIBVERBS=${2:-/usr/lib/x86_64-linux-gnu/libibverbs.so.1}
PABI=IBVERBS_PRIVATE_34
CC=${CC:-cc}
HERE=$(dirname "$0")

failures=0
fail() {
	echo "FAIL: $*" >&2
	failures=$((failures + 1))
}
pass() {
	echo "ok:   $*"
}

for f in "$PROVIDER" "$LIBIBVERBS"; do
	if [ ! -r "$f" ]; then
		echo "check-abi: cannot read $f" >&2
		exit 1
	fi
done

# --- 1. layout assertions --------------------------------------------------
for hdr in verbs_private.h stellar.h; do
	if "$CC" -fsyntax-only -Wall -Wextra -Werror \
		-I"$HERE" -I"$HERE/../../include/uapi" \
		-include "$HERE/$hdr" -x c /dev/null; then
		pass "$hdr compiles standalone (static layout asserts hold)"
	else
		fail "$hdr does not compile standalone or a layout assert fired"
	fi
done

# --- helpers over objdump -T ----------------------------------------------
# Dynamic symbol lines look like:
#   0000000000000000      DF *UND*  0000000000000000 (IBVERBS_PRIVATE_34) name
#   0000000000012340 g    DF .text  00000000000000a1  IBVERBS_PRIVATE_34 name
dynsyms() {
	LC_ALL=C objdump -T "$1" | awk '$NF != "" && $0 ~ /^[0-9a-f]+ /'
}

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# Exports of libibverbs and imports of the provider, as "name version".
dynsyms "$LIBIBVERBS" | awk '$0 !~ /\*UND\*/ && $(NF-1) ~ /^IBVERBS_/ {
	print $NF " " $(NF-1) }' | sort -u > "$tmp/lib_exports"
dynsyms "$PROVIDER" | awk '/\*UND\*/' > "$tmp/prov_undef"
awk '$(NF-1) ~ /^\(IBVERBS_/ { v = $(NF-1); gsub(/[()]/, "", v);
	print $NF " " v }' "$tmp/prov_undef" | sort -u > "$tmp/prov_imports"

if ! grep -q " $PABI\$" "$tmp/lib_exports"; then
	fail "$LIBIBVERBS exports no $PABI symbols"
fi

# --- 2. every libibverbs import exists with the same version ---------------
if ! grep -qx "verbs_register_driver_34 $PABI" "$tmp/prov_imports"; then
	fail "$PROVIDER does not import verbs_register_driver_34@$PABI"
fi
missing=$(comm -23 "$tmp/prov_imports" "$tmp/lib_exports" | tr ' ' '@')
if [ -n "$missing" ]; then
	for s in $missing; do
		fail "$s is not exported by $LIBIBVERBS"
	done
else
	pass "$(grep -c " $PABI\$" "$tmp/prov_imports") $PABI imports" \
		"(and $(grep -vc " $PABI\$" "$tmp/prov_imports") public ones)" \
		"all exported by $LIBIBVERBS"
fi

# --- 3. no foreign private ABI, no unversioned strong imports ---------------
awk -v want="($PABI)" '{ ver = $(NF-1) }
     ver ~ /^\(IBVERBS_PRIVATE_/ && ver != want { print $NF " " ver }
     ver == "Base" && $2 != "w" { print $NF " unversioned" }' \
	"$tmp/prov_undef" > "$tmp/bad_imports"
if [ -s "$tmp/bad_imports" ]; then
	while read -r sym ver; do
		fail "unexpected import $sym $ver"
	done < "$tmp/bad_imports"
else
	pass "no private imports other than $PABI, no unversioned imports"
fi

# --- 4. nothing exported -----------------------------------------------------
dynsyms "$PROVIDER" | awk '$0 !~ /\*UND\*/ { print $NF }' > "$tmp/exports"
if [ -s "$tmp/exports" ]; then
	fail "provider exports symbols: $(tr '\n' ' ' < "$tmp/exports")"
else
	pass "provider exports no dynamic symbols"
fi

if ! LC_ALL=C objdump -p "$PROVIDER" | grep -q "NEEDED *libibverbs.so.1"; then
	fail "$PROVIDER is not linked against libibverbs.so.1"
fi

if [ "$failures" -ne 0 ]; then
	echo "check-abi: $failures check(s) failed" >&2
	exit 1
fi
echo "check-abi: all checks passed"
