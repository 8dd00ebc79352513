# SPDX-License-Identifier: GPL-2.0-only
#
# rdmasim: module parameter selftest, sourced by uml-init.sh inside the
# UML test kernel with rdmasim unloaded. Uses check(), $RDRV and $PLAT
# from there.

# the kernel's generic async_probe=1 (like driver_async_probe=rdmasim)
# asks for asynchronous probing; creating devices must still work
check "insmod_rdmasim_async_probe" insmod "$RDRV/rdmasim.ko" async_probe=1
check "async_probe_created_rdmasim0" test -d /sys/class/infiniband/rdmasim0
check "rmmod_rdmasim_async_probe" rmmod rdmasim
