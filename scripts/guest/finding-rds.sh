# shellcheck shell=sh
# shellcheck disable=SC2154 # val: set by guest/lib.sh's kv()
# SPDX-License-Identifier: GPL-2.0-only
#
# rdmasim: RDS over the IB transport (rds_rdma) between two RoCE-mode
# rdmasim devices, and the reproducer of three findings in RDS
# (Documentation/ulps.rst, "RDS" and "Findings"). Run it with
#
#   make script SCRIPT=scripts/guest/finding-rds.sh
#
# tools/rds/rsim_rds exchanges messages, then an RDMA WRITE and an RDMA
# READ on MRs RDS registers with fast registrations; the data path
# counters of both devices must move. Then both devices are deleted under
# the connection. The run fails, on the kernel's reports, while the
# findings stand:
#  1. lockdep: rds_trans_sem against rdma_cm's handler_mutex, at the
#     first passive connect (rds_ib_laddr_check() destroys a cm_id under
#     rds_trans_sem; the CM's REQ handler takes rds_trans_sem under
#     handler_mutex);
#  2. DMA-API: "device driver tries to sync DMA memory it has not
#     allocated", rds_ib_sync_mr() from rds_rdma_unuse() when the message
#     that carried an RDMA op arrives;
#  3. DMA-API: "frees DMA memory with different direction",
#     rds_dma_hdr_free() at the connection's shutdown: rds_dma_hdr_alloc()
#     maps every header DMA_BIDIRECTIONAL whatever direction it is given,
#     rds_dma_hdr_free() unmaps with the given one.
# None of them shows on rxe or siw: both use virtual DMA, which
# CONFIG_DMA_API_DEBUG does not see (the lockdep report does, on any
# device). Uses guest/lib.sh's helpers, RSIM_MODDIR, RSIM_MODROOT and
# RSIM_KVER.

DBG=/sys/kernel/debug/rdmasim

# rds_ops dev: the device's RDMA WRITEs, READs and fast registrations, in
# rds_wr, rds_rd, rds_reg
rds_ops() {
	rds_wr=0 rds_rd=0 rds_reg=0
	kv "$DBG/$1/datapath" op_rdma_write && rds_wr=$val
	kv "$DBG/$1/datapath" op_rdma_read && rds_rd=$val
	kv "$DBG/$1/datapath" op_reg_mr && rds_reg=$val
}

ip link add rsim_rd0 type veth peer name rsim_rd1
for i in rsim_rd0 rsim_rd1; do
	echo 0 >/proc/sys/net/ipv6/conf/$i/accept_dad
	ip link set $i up
done
for i in rsim_rd0 rsim_rd1; do
	check "rds_${i}_link_local" wait_for "$i's address" 60 ll_addr_ready $i
	check "rds_${i}_link_add" rdma link add ${i}_rdmasim type rdmasim netdev $i
	check "rds_${i}_gid" wait_for "the RoCE v2 GID" 60 roce_v2_gid ${i}_rdmasim
done
ip -6 -o addr show dev rsim_rd0 scope link >/run/rll0
read -r _ _ _ a0 _ </run/rll0
ip -6 -o addr show dev rsim_rd1 scope link >/run/rll1
read -r _ _ _ a1 _ </run/rll1
check "rds_modules" modprobe -d "$RSIM_MODROOT" -S "$RSIM_KVER" rds_rdma
rds_ops rsim_rd0_rdmasim
wr0=$rds_wr rd0=$rds_rd
rds_ops rsim_rd1_rdmasim
reg0=$rds_reg
# A on rsim_rd0_rdmasim does the RDMA ops, B's MRs are on rsim_rd1_rdmasim
check "rds_exchange" timeout 120 "$RSIM_MODDIR/tools/rds/rsim_rds" \
	"${a0%%/*}%rsim_rd0" "${a1%%/*}%rsim_rd1" 200
rds_ops rsim_rd0_rdmasim
say "RSIM-ULP rds: rsim_rd0_rdmasim rdma_write +$((rds_wr - wr0))" \
	"rdma_read +$((rds_rd - rd0))"
check "rds_requester_rdma_moved" \
	test $((rds_wr - wr0)) -gt 0 -a $((rds_rd - rd0)) -gt 0
rds_ops rsim_rd1_rdmasim
say "RSIM-ULP rds: rsim_rd1_rdmasim reg_mr +$((rds_reg - reg0))"
check "rds_responder_fast_registrations" test $((rds_reg - reg0)) -gt 0
# The shutdown unmaps every header of the connection with the wrong
# direction (finding 3): thousands of alike reports. DMA-API debug prints
# the first three and counts the rest (guest/init-uml.sh had it print
# every error); then it prints all again.
D=/sys/kernel/debug/dma-api
read -r e0 <$D/error_count
echo 0 >$D/all_errors
echo 3 >$D/num_errors
check "rds_rsim_rd1_rdmasim_del" rdma link del rsim_rd1_rdmasim
check "rds_rsim_rd0_rdmasim_del" rdma link del rsim_rd0_rdmasim
check "rds_veth_del" ip link del rsim_rd0
read -r e1 <$D/error_count
say "RSIM-ULP rds: DMA-API errors at the shutdown: $((e1 - e0))"
echo 1 >$D/all_errors
