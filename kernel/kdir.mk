# SPDX-License-Identifier: GPL-2.0
# The kernel build tree out-of-tree builds use, for kernel/ and tests/kmod/:
# KDIR if set, else the running kernel's if it has one, else the newest
# installed Debian one (scripts/kasan.sh installs its own kernel beside
# them; it is never picked by default).
KVER ?= $(shell uname -r)
KDIR ?= $(shell if [ -d /lib/modules/$(KVER)/build ]; then \
		  echo /lib/modules/$(KVER)/build; \
		else \
		  ls -d /lib/modules/*/build 2>/dev/null | \
		    grep -v -- -stellar-kasan/ | sort -V | tail -n 1; \
		fi)
