# shellcheck shell=sh
# shellcheck disable=SC2154 # val: set by guest/lib.sh's kv()
# SPDX-License-Identifier: GPL-2.0-only
#
# rdmasim: NFS over RDMA on RoCE-mode rdmasim devices (issue 21;
# Documentation/ulps.rst, "NFS over RDMA"), sourced by the guest scripts
# that run it: nfsd (NFSv4, svcrdma) listening on "rdma 20049" and
# exporting a tmpfs, the NFS client (xprtrdma) mounting it with
# proto=rdma6, a file written and read back with O_DIRECT, compared with
# the pattern and with the server's copy, then unmounted and the server
# stopped.
#
# No nfs-utils: the test kernel does what they would. rpc.nfsd's work is
# writes to /proc/fs/nfsd (portlist, threads); rpc.mountd's is the answer
# to the kernel's export upcalls, written ahead into the caches'
# channels: the client's address to an auth domain (auth.unix.ip), the
# export (nfsd.export) and its file handle key (nfsd.fh, fsid 0: the
# NFSv4 pseudo-root). NFSv4 needs no MOUNT protocol and no rpcbind, and
# the client mounts through mount(2) with the address given (addr=), as
# mount.nfs would. With no client tracking daemon (nfsdcld) the server
# cannot be told that no client has state to reclaim (v4_end_grace
# refuses: EBUSY), so it waits out its grace period, set to the shortest
# (10 s), before the first OPEN succeeds.
#
# Both ends use the initial network namespace (nfsd's listener and the
# mount here do; the veth pair's two ends are there).
#
# Uses check(), say(), wait_for(), kv() from guest/lib.sh, RSIM_MODROOT
# and RSIM_KVER from guest/init-uml.sh, and $DBG.

NFS_EXPORT=/run/rsim-nfs
NFS_MNT=/run/rsim-nfs-mnt
NFS_PORT=20049
NFS_DOMAIN=rsim
NFSD=/proc/fs/nfsd

# nfs_modules: nfsd, the RPC-over-RDMA transports, the NFSv4 client
nfs_modules() {
	local m
	for m in nfsd rpcrdma nfsv4; do
		[ -d "/sys/module/$m" ] && continue
		modprobe -d "$RSIM_MODROOT" -S "$RSIM_KVER" $m || return 1
	done
}

# nfs_expiry: a cache entry's expiry, a day from now (wall clock)
nfs_expiry() {
	echo $(($(date +%s) + 86400))
}

# nfs_server_up client: a tmpfs exported to <client> (an address) as the
# NFSv4 root, read-write, no root squashing; nfsd, NFSv4 only (NFSv3
# would start lockd, which registers with rpcbind), with 4 threads on an
# RDMA listener only, and the shortest lease and grace period (10 s)
nfs_server_up() {
	local e
	e=$(nfs_expiry)
	mkdir -p $NFS_EXPORT && mount -t tmpfs -o size=16m rsim-nfs $NFS_EXPORT &&
		{ [ -e $NFSD/threads ] || mount -t nfsd nfsd $NFSD; } &&
		echo "nfsd $1 $e $NFS_DOMAIN" >/proc/net/rpc/auth.unix.ip/channel &&
		# flags 0x2402: insecure (any source port), no_subtree_check,
		# fsid= given (fsid 0: the NFSv4 root); anon 65534
		echo "$NFS_DOMAIN $NFS_EXPORT $e 9218 65534 65534 0" \
			>/proc/net/rpc/nfsd.export/channel &&
		printf '%s 1 \\x00000000 %s %s\n' $NFS_DOMAIN "$e" $NFS_EXPORT \
			>/proc/net/rpc/nfsd.fh/channel &&
		echo -3 >$NFSD/versions &&
		echo 10 >$NFSD/nfsv4leasetime && echo 10 >$NFSD/nfsv4gracetime &&
		echo "rdma $NFS_PORT" >$NFSD/portlist &&
		echo 4 >$NFSD/threads
}

# nfs_server_down: nfsd stopped (its listener and transports closed), the
# caches flushed, the tmpfs gone
nfs_server_down() {
	local c now
	now=$(date +%s)
	echo 0 >$NFSD/threads || return 1
	for c in auth.unix.ip nfsd.export nfsd.fh; do
		echo "$now" >/proc/net/rpc/$c/flush
	done
	umount $NFS_EXPORT
}

# nfs_mount addr: the export mounted on $NFS_MNT over RDMA from <addr>
# (IPv6, "%ifname" scoped)
nfs_mount() {
	mkdir -p $NFS_MNT &&
		timeout 120 mount -t nfs4 \
			-o "vers=4.2,proto=rdma6,port=$NFS_PORT,addr=$1" \
			"[$1]:/" $NFS_MNT
}

# nfs_io: 1 MiB written with O_DIRECT through the mount, read back the
# same way, compared with the pattern and with the server's file
nfs_io() {
	dd if=/dev/urandom of=/run/nfs-pat bs=64k count=16 2>/dev/null &&
		timeout 60 dd if=/run/nfs-pat of=$NFS_MNT/pattern bs=64k \
			oflag=direct 2>/dev/null &&
		timeout 60 dd if=$NFS_MNT/pattern of=/run/nfs-back bs=64k \
			iflag=direct 2>/dev/null &&
		cmp /run/nfs-pat /run/nfs-back &&
		cmp /run/nfs-pat $NFS_EXPORT/pattern
}

# nfs_ops sdev cdev: the server's device's RDMA READ and WRITE counters
# and the client's device's fast registrations, in nfs_rd, nfs_wr, nfs_reg
nfs_ops() {
	nfs_rd=0 nfs_wr=0 nfs_reg=0
	kv "$DBG/$1/datapath" op_rdma_read && nfs_rd=$val
	kv "$DBG/$1/datapath" op_rdma_write && nfs_wr=$val
	kv "$DBG/$2/datapath" op_reg_mr && nfs_reg=$val
}

# nfs_over_rdma tag saddr caddr sdev cdev: the server on <saddr>'s device
# <sdev>, the client mounting from <caddr> (the client's address as the
# server sees it) through <cdev>; checks named nfs_<tag>_*
nfs_over_rdma() {
	local tag="$1" saddr="$2" caddr="$3" sdev="$4" cdev="$5" rd0 wr0 reg0
	check "nfs_${tag}_modules" nfs_modules
	check "nfs_${tag}_server_up" nfs_server_up "${caddr%%%*}"
	nfs_ops "$sdev" "$cdev"
	rd0=$nfs_rd wr0=$nfs_wr reg0=$nfs_reg
	check "nfs_${tag}_mount" nfs_mount "$saddr"
	check "nfs_${tag}_file_read_back" nfs_io
	nfs_ops "$sdev" "$cdev"
	say "RSIM-ULP nfs $tag: server rdma_read +$((nfs_rd - rd0))" \
		"rdma_write +$((nfs_wr - wr0)), client reg_mr +$((nfs_reg - reg0))"
	# svcrdma moves the payload itself: RDMA READs pull what the client
	# writes, RDMA WRITEs push what it reads; xprtrdma registers the
	# client's buffers (FRWR)
	# shellcheck disable=SC2317 # called by check
	rdma_moved() {
		[ "$nfs_rd" -gt "$rd0" ] && [ "$nfs_wr" -gt "$wr0" ] &&
			[ "$nfs_reg" -gt "$reg0" ]
	}
	check "nfs_${tag}_rdma_counters_moved" rdma_moved
	check "nfs_${tag}_umount" timeout 60 umount $NFS_MNT
	check "nfs_${tag}_server_down" nfs_server_down
}
