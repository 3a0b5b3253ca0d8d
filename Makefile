# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# virtio-stellar top-level build.
#
#   make            build the kernel module, the rdma-core provider, the tools
#   make install    install them (DESTDIR honoured)
#   make check      install missing packages, build, run unit + VM tests
#   make demo       install missing packages, build, show a device in a VM
#   make deb        Debian packages (module as DKMS source, provider, tools)
#                   in build/deb/, checked with lintian (scripts/build-deb.sh)
#   make deploy-check  build the packages, install them in a VM (DKMS
#                   builds the module there), run traffic, purge them;
#                   long, not part of check
#   make sparse     build the module under sparse (C=1)
#   make checkpatch run the kernel's checkpatch.pl on kernel/
#   make kasan      build a KASAN/lockdep/kmemleak kernel from Debian's
#                   linux-source-6.1 and run the VM tests on it (long;
#                   not part of check; T=name for one test)
#
# KDIR selects the kernel build tree (default: the running kernel's, else
# the newest installed).  T=name runs a single VM integration test;
# MEMDEBUG=1 boots every test VM with SLUB debugging (default: all but the
# tests whose header says memdebug=off).

DESTDIR ?=
MEMDEBUG ?= 0
# checkpatch.pl ships with linux-source-6.1 (not with the headers).
CHECKPATCH ?= $(firstword $(wildcard \
	/usr/src/linux-source-6.1/scripts/checkpatch.pl \
	/var/cache/stellar-kasan/linux-source-6.1/scripts/checkpatch.pl))

all: module provider tools

deps:
	./scripts/install-deps.sh

module:
	$(MAKE) -C kernel

provider:
	$(MAKE) -C providers/stellar

tools:
	$(MAKE) -C tools

install: all
	$(MAKE) -C kernel install DESTDIR=$(DESTDIR)
	$(MAKE) -C providers/stellar install DESTDIR=$(DESTDIR)
	$(MAKE) -C tools install DESTDIR=$(DESTDIR)

deb:
	./scripts/build-deb.sh

unit:
	$(MAKE) -C tests/unit check
	$(MAKE) -C tools check
	$(MAKE) -C providers/stellar check abicheck loadcheck

# Programs the VM integration tests run.
testprogs:
	$(MAKE) -C providers/stellar testprogs
	$(MAKE) -C tests/kmod

vmtest: all testprogs
	STELLAR_MEMDEBUG=$(MEMDEBUG) ./tests/vm/run-tests.sh $(T)

check: deps
	$(MAKE) all testprogs
	$(MAKE) unit
	STELLAR_MEMDEBUG=$(MEMDEBUG) ./tests/vm/run-tests.sh $(T)

# The packages installed in a VM, DKMS build included: 10-25 minutes
# under TCG, more than make check's budget leaves, so not part of it.
deploy-check: deps
	$(MAKE) all deb
	./tests/vm/run-tests.sh tests/deploy/deploy_packages.sh

demo: deps
	$(MAKE) all
	./tests/vm/run-vm.sh scripts/demo.sh

sparse:
	$(MAKE) -C kernel sparse

kasan:
	./scripts/install-deps.sh --kasan
	$(MAKE) all testprogs
	./scripts/kasan.sh $(T)

checkpatch:
	@test -n "$(CHECKPATCH)" || { echo "checkpatch.pl not found; set CHECKPATCH=" >&2; exit 1; }
	$(CHECKPATCH) --no-tree --quiet -f \
		$(filter-out %.mod.c,$(wildcard kernel/*.c)) kernel/*.h include/uapi/*.h

clean:
	-$(MAKE) -C kernel clean
	-$(MAKE) -C tests/kmod clean
	$(MAKE) -C providers/stellar clean
	$(MAKE) -C tools clean
	$(MAKE) -C tests/unit clean

.PHONY: all deps module provider tools install deb deploy-check unit testprogs vmtest check demo \
	sparse checkpatch kasan clean
