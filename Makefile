# SPDX-License-Identifier: GPL-2.0-only
#
# rdmasim: a thin wrapper around the kernel's external-module build; the
# build graph is in Kbuild.
#
#   make [KDIR=<kernel build dir>] [ARCH=um]	build the modules
#   make umad					tools/umad/rsim_umad, a host
#						libibumad client (the selftest's)
#   make rds					tools/rds/rsim_rds, RDS over
#						the IB transport (the
#						conformance boot's)
#   make dmah KSRC=<7.3 source>			tools/dmah/rsim_dmah, DMA
#						handles through the uverbs
#						ioctl ABI (the selftest's)
#   make install [INSTALL_MOD_PATH=<root>]	modules_install and depmod
#   make dkms-install [KVER=<release>]		DKMS: add, build and install
#   make dkms-remove				DKMS: remove every version
#   make version					the version string (git)
#   make check					every test (see README)
#   make check-6.12				the KUnit and conformance suites
#						booted on Debian 13's 6.12
#   make demo					boot UML with rdmasim, rxe, siw
#   make bench					figures from a non-debug UML kernel
#   make conformance				the conformance suites alone (UML)
#   make stock					Debian 12's stock kernel under QEMU:
#						rdmasim installed and checked there
#   make kunit [SUITE=<glob>]			KUnit suites in one UML boot
#   make selftest				the shell selftest in one UML boot
#   make fabric					the simulated fabric with opensm in
#						one UML boot (switches, IPoIB, SRP,
#						partitions, handover)
#   make script SCRIPT=<path>			development: your shell script in
#						one UML boot, rdmasim0, rxe0 and
#						siw0 up (guest/init-uml.sh)
#   make rdma-core				rdma-core 65 (libibverbs, the ibv_*
#						tools, pyverbs) from Debian sid's
#						source package, built and cached
#   make rdma-core-smoke			that build's ibv_devices and
#						ibv_devinfo in one UML boot
#   make provider				tools/provider/librdmasim-rdmav65.so,
#						the libibverbs provider, against
#						that build (RSIM_RDMA_CORE_* from
#						scripts/build-rdma-core.sh)

KDIR ?= /lib/modules/$(shell uname -r)/build
# the kernel release KDIR was built for (its utsrelease.h: Debian's headers
# packages say 6.1.0-50-amd64 there, 6.1.176 in kernel.release)
KRELEASE = $(shell sed -n 's/^\#define UTS_RELEASE "\(.*\)"/\1/p' \
	     $(KDIR)/include/generated/utsrelease.h)
# modules_install signs with CONFIG_MODULE_SIG_ALL only where KDIR has the
# kernel's key (a distribution's headers have none: no sign-file errors)
NOSIGN = $(if $(wildcard $(KDIR)/certs/signing_key.pem),,CONFIG_MODULE_SIG_ALL=)

all: modules

modules:
	$(MAKE) -C $(KDIR) M=$(CURDIR) modules

# modules_install into $(INSTALL_MOD_PATH)/lib/modules/<release>/ (the
# kernel's default directory for external modules: extra/ before 6.4,
# updates/ after), then depmod: Debian's headers have no System.map, so the
# kernel's own depmod step is skipped there
install: modules
	$(MAKE) -C $(KDIR) M=$(CURDIR) modules_install $(NOSIGN)
	depmod $(if $(INSTALL_MOD_PATH),-b $(INSTALL_MOD_PATH)) $(KRELEASE)

# DKMS (scripts/dkms.sh): /usr/src/rdmasim-<version>, dkms add + install
# for KVER (default: the running kernel); dkms-remove removes every version
dkms-install:
	scripts/dkms.sh install $(KVER)

dkms-remove:
	scripts/dkms.sh remove

version:
	@sh scripts/version.sh .

clean:
	$(MAKE) -C $(KDIR) M=$(CURDIR) clean
	$(MAKE) -C tools/umad clean
	$(MAKE) -C tools/rds clean
	$(MAKE) -C tools/dmah clean
	$(MAKE) -C tools/provider clean

# a host program: the host's compiler and libibumad, whatever ARCH says
umad:
	$(MAKE) -C tools/umad ARCH= rsim_umad

# ibsim's tests, unmodified (IBSIM=<Debian's ibsim source>): make fabric's
ibsim-tests:
	$(MAKE) -C tools/ibsim ARCH= IBSIM=$(IBSIM)

# a host program: AF_RDS from the host's headers
rds:
	$(MAKE) -C tools/rds ARCH= rsim_rds

# a host program built against KSRC's uapi headers (the DMAH core's)
dmah:
	$(MAKE) -C tools/dmah ARCH= KSRC=$(KSRC) rsim_dmah

# a host library against rdma-core's build (scripts/build-rdma-core.sh's paths)
provider:
	$(MAKE) -C tools/provider ARCH=

check:
	scripts/check.sh

check-6.12:
	scripts/check-6.12.sh

demo:
	scripts/demo.sh

bench:
	scripts/bench.sh

conformance:
	scripts/conformance-uml.sh

SUITE ?= *
kunit:
	scripts/check-part.sh kunit '$(SUITE)'

selftest:
	scripts/check-part.sh selftest

fabric:
	scripts/check-part.sh fabric

# the kernel patch series (out/upstream/kernel/), checked and built in-tree
upstream:
	scripts/upstream-check.sh

smp:
	scripts/check-part.sh smp

SCRIPT ?=
script:
	scripts/check-part.sh script '$(SCRIPT)'

peers:
	scripts/peers.sh

rdma-core:
	scripts/build-rdma-core.sh

rdma-core-smoke:
	scripts/build-rdma-core.sh smoke

rdma-core-tests:
	scripts/check-part.sh rdmacore

stock:
	scripts/check-part.sh stock

.PHONY: all modules umad ibsim-tests upstream rds dmah provider clean check demo bench conformance kunit selftest fabric script smp peers \
	rdma-core rdma-core-smoke rdma-core-tests install dkms-install dkms-remove version stock \
	check-6.12
