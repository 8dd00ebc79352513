# shellcheck shell=sh
# SPDX-License-Identifier: GPL-2.0-only
#
# rdmasim: the reproducer of a finding (Documentation/ulps.rst, "Findings"):
# rdma-core's siw provider aborts on every CQ destroy in a build that keeps
# assertions (no NDEBUG, as the project's rdma-core 65 build: -O1 replaces
# the release flags). siw_destroy_cq() (providers/siw/siw.c 193) says
#
#   assert(pthread_spin_trylock(&cq->lock));
#
# pthread_spin_trylock() returns 0 when it takes the lock, so the
# assertion fails exactly when the lock is free, the normal case. Found by
# make peers, where rdma-core's tests on siw stop at the first test that
# destroys a CQ. pyverbs creates and destroys one CQ on siw0 (the boot's
# peer), then on rdmasim0. Run it with
#
#   make script SCRIPT=scripts/guest/finding-siw-destroy-cq-assert.sh
#
# which fails, on siw0's check, while the finding stands.

# rdma-core's build and pyverbs, rdmasim's provider (the boot loads it)
check "cq_cycle_env" rdma_core_env

# cq_cycle dev: a CQ created and destroyed on <dev> through pyverbs
cq_cycle() {
	python3 -c "
from pyverbs.device import Context
from pyverbs.cq import CQ
ctx = Context(name='$1')
cq = CQ(ctx, 16)
cq.close()
ctx.close()
print('$1: CQ created and destroyed')"
}

for d in siw0 rdmasim0; do
	check "cq_cycle_$d" cq_cycle $d
done
