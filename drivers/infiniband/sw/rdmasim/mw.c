// SPDX-License-Identifier: GPL-2.0-only
/*
 * rdmasim: memory windows, type 1 and type 2B (IBA 10.6.7), for
 * userspace: a process binds them through its mapped send queue (usq.c),
 * as a BIND_MW work request; the kernel's own send WRs carry no bind.
 *
 * A window's key is in the MRs' key space (index << 8 | variant): its
 * entry in the device's mr_xa is tagged (RSIM_KEY_MW_TAG), so that an
 * rkey names an MR or a window, never both. The core's struct ib_mw is
 * freed when dealloc_mw returns; what the data path holds is the
 * device's struct rsim_mw, allocated apart and freed by its last
 * reference.
 *
 * The rules are the IBA's, as rxe's rxe_mw.c applies them, and more:
 *  - a bind names the window by its current rkey and the MR by its lkey,
 *    variant included; window, MR and QP must share a PD (C10-72), the MR
 *    must be valid with IB_ACCESS_MW_BIND (C10-73), and local write if
 *    the window grants remote write or atomics (C10-74); the window lies
 *    within the MR (C10-75); zero-based windows are not supported;
 *  - a type 1 window is bound again by a bind (length 0 unbinds it);
 *    a type 2B window only when FREE (o10-37.2.30), with a length
 *    (o10-37.2.40), and is then bound to the QP that bound it: only that
 *    QP reaches memory through it, and only LOCAL_INV (any QP of its PD)
 *    or SEND_WITH_INV arriving at that QP invalidates it; a type 1 window
 *    is never invalidated so (o10-37.2.26);
 *  - an MR with windows bound cannot be invalidated, re-registered or
 *    deregistered (-EBUSY), so that a window's MR stays as it was bound.
 *
 * Locking: a window's lock, then the lock of the MR it is bound to (or
 * being bound to). The window's generation is bumped under both, so the
 * data path, which copies page by page under the MR's lock only, sees an
 * invalidation as soon as it returns, as it sees an MR's (dp.c).
 */

#include <linux/slab.h>
#include <rdma/uverbs_ioctl.h>

#include "rdmasim.h"

/* the access rights a window may grant (and local write, ignored) */
#define RSIM_MW_ACCESS	(IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE | \
			 IB_ACCESS_REMOTE_READ | IB_ACCESS_REMOTE_ATOMIC)

static struct rsim_mw *to_rsim_mw(struct ib_mw *ibmw)
{
	return container_of(ibmw, struct rsim_ibmw, ibmw)->mw;
}

/**
 * rsim_mw_get() - the window a key names, whatever its variant, held
 * @rsim: device
 * @key: an rkey
 *
 * Context: process or softirq; takes the key table's lock with BH off.
 * Return: the window, or NULL if the key names none (an MR, or nothing).
 */
struct rsim_mw *rsim_mw_get(struct rsim_dev *rsim, u32 key)
{
	struct rsim_mw *mw = NULL;
	void *entry;

	xa_lock_bh(&rsim->mr_xa);
	entry = xa_load(&rsim->mr_xa, RSIM_KEY_INDEX(key));
	if (entry && xa_pointer_tag(entry) == RSIM_KEY_MW_TAG) {
		mw = xa_untag_pointer(entry);
		if (!refcount_inc_not_zero(&mw->ref))
			mw = NULL;
	}
	xa_unlock_bh(&rsim->mr_xa);
	return mw;
}

/**
 * rsim_mw_put() - drop a reference from rsim_mw_get() or a checked range
 * @mw: the window
 *
 * Context: any but hard IRQ.
 */
void rsim_mw_put(struct rsim_mw *mw)
{
	if (refcount_dec_and_test(&mw->ref))
		kfree(mw);
}

/*
 * Unbind: the MR forgets the window, and every range checked through the
 * window is stale from now on. Window's lock held. Returns the MR whose
 * reference the caller drops once it has unlocked, or NULL.
 */
static struct rsim_mr *rsim_mw_unbind_locked(struct rsim_mw *mw)
{
	struct rsim_mr *mr = mw->mr;

	lockdep_assert_held(&mw->lock);
	if (!mr) {
		WRITE_ONCE(mw->gen, mw->gen + 1);
		mw->bound = false;
		return NULL;
	}
	spin_lock(&mr->lock);
	WRITE_ONCE(mw->gen, mw->gen + 1);
	mw->bound = false;
	mr->nmw--;
	spin_unlock(&mr->lock);
	mw->mr = NULL;
	mw->addr = 0;
	mw->length = 0;
	mw->access = 0;
	mw->qp_serial = 0;
	return mr;
}

static int rsim_alloc_mw(struct ib_mw *ibmw, struct ib_udata *udata)
{
	struct rsim_dev *rsim = to_rsim_dev(ibmw->device);
	struct rsim_mw *mw;
	u32 index;
	int err;

	if (ibmw->type != IB_MW_TYPE_1 && ibmw->type != IB_MW_TYPE_2)
		return -EINVAL;
	if (udata && (udata->inlen || udata->outlen))
		return -EINVAL;
	if (!rsim_res_get(rsim, RSIM_RES_MW))
		return -ENOMEM;
	mw = rsim_should_fail(rsim, RSIM_FAULT_ALLOC) ? NULL :
	     kzalloc(sizeof(*mw), GFP_KERNEL_ACCOUNT);
	if (!mw) {
		err = -ENOMEM;
		goto err_res_put;
	}
	mw->rsim = rsim;
	mw->ibmw = ibmw;
	spin_lock_init(&mw->lock);
	refcount_set(&mw->ref, 1);
	mw->type = ibmw->type;
	mw->pd = ibmw->pd;

	/* the key last, so that it never names a half-built window */
	if (rsim_should_fail(rsim, RSIM_FAULT_ALLOC))
		err = -ENOMEM;
	else
		err = xa_alloc_cyclic_bh(&rsim->mr_xa, &index,
					 xa_tag_pointer(mw, RSIM_KEY_MW_TAG),
					 XA_LIMIT(1, RSIM_MR_INDEX_MAX),
					 &rsim->mr_next, GFP_KERNEL);
	if (err < 0) {
		err = -ENOMEM;
		goto err_free;
	}
	mw->index = index;
	mw->rkey = (index << RSIM_KEY_VARIANT_BITS) |
		   (u8)atomic_inc_return(&rsim->key_variant);
	ibmw->rkey = mw->rkey;
	container_of(ibmw, struct rsim_ibmw, ibmw)->mw = mw;
	return 0;

err_free:
	kfree(mw);
err_res_put:
	rsim_res_put(rsim, RSIM_RES_MW);
	return err;
}

/*
 * Dealloc never fails: the window is unpublished, unbound and dead; a
 * range the data path checked through it is stale at its next page.
 */
static int rsim_dealloc_mw(struct ib_mw *ibmw)
{
	struct rsim_mw *mw = to_rsim_mw(ibmw);
	struct rsim_dev *rsim = mw->rsim;
	struct rsim_mr *old;

	xa_erase_bh(&rsim->mr_xa, mw->index);
	spin_lock_bh(&mw->lock);
	old = rsim_mw_unbind_locked(mw);
	mw->dead = true;
	mw->ibmw = NULL;
	spin_unlock_bh(&mw->lock);
	if (old)
		rsim_mr_put(old);
	rsim_res_put(rsim, RSIM_RES_MW);
	rsim_mw_put(mw);
	return 0;
}

/*
 * The rules on the window and the bind alone (before any MR is looked
 * at); the window's lock held.
 */
static bool rsim_mw_bind_ok(const struct rsim_mw *mw, const struct rsim_qp *qp,
			    const struct rsim_mw_bind *b)
{
	if (mw->dead || mw->rkey != b->mw_rkey || mw->pd != qp->ibqp.pd)
		return false;
	if (b->access & ~RSIM_MW_ACCESS)
		return false;	/* zero-based windows, MW_BIND, ... */
	if (mw->type == IB_MW_TYPE_2 && (mw->bound || !b->length))
		return false;
	return true;
}

/*
 * The rules on the MR, checked and the window counted in its @nmw
 * atomically (a dereg from now on is refused); the window's lock held.
 */
static bool rsim_mw_reserve_mr(struct rsim_mr *mr, const struct rsim_qp *qp,
			       const struct rsim_mw_bind *b)
{
	bool ok;

	spin_lock(&mr->lock);
	ok = mr->state == RSIM_MR_VALID && mr->reg.key == b->mr_lkey &&
	     mr->ibmr.pd == qp->ibqp.pd &&
	     (mr->reg.access & IB_ACCESS_MW_BIND) &&
	     !(mr->reg.access & IB_ZERO_BASED) &&
	     (!(b->access & (IB_ACCESS_REMOTE_WRITE |
			     IB_ACCESS_REMOTE_ATOMIC)) ||
	      (mr->reg.access & IB_ACCESS_LOCAL_WRITE)) &&
	     rsim_range_in(mr->reg.iova, mr->reg.length, b->addr,
			   b->length);
	if (ok)
		mr->nmw++;
	spin_unlock(&mr->lock);
	return ok;
}

/**
 * rsim_mw_bind() - execute a BIND_MW work request
 * @rsim: device
 * @qp: the posting QP
 * @b: the bind, as the kernel copied it from the send ring
 *
 * On success the window has the new rkey (the low 8 bits of @b->rkey as
 * its variant) and the new range and rights; a type 2 window is bound to
 * @qp. On failure nothing changed.
 *
 * Context: process or softirq; takes the window's and MRs' locks, BH off.
 * Return: IB_WC_SUCCESS or IB_WC_MW_BIND_ERR.
 */
enum ib_wc_status rsim_mw_bind(struct rsim_dev *rsim, const struct rsim_qp *qp,
			       const struct rsim_mw_bind *b)
{
	enum ib_wc_status status = IB_WC_MW_BIND_ERR;
	struct rsim_mr *mr = NULL, *old;
	struct rsim_mw *mw;

	mw = rsim_mw_get(rsim, b->mw_rkey);
	if (!mw)
		return status;
	if (b->length) {
		mr = rsim_mr_get(rsim, b->mr_lkey);
		if (!mr)
			goto out_put_mw;
	}
	spin_lock_bh(&mw->lock);
	if (!rsim_mw_bind_ok(mw, qp, b) ||
	    (mr && !rsim_mw_reserve_mr(mr, qp, b))) {
		spin_unlock_bh(&mw->lock);
		goto out_put_mr;
	}
	old = rsim_mw_unbind_locked(mw);
	mw->rkey = (mw->rkey & ~0xffU) | (b->rkey & 0xff);
	if (mr) {
		spin_lock(&mr->lock);
		mw->mr = mr;	/* its reference, from rsim_mr_get() */
		mw->addr = b->addr;
		mw->length = b->length;
		mw->access = b->access & ~IB_ACCESS_LOCAL_WRITE;
		mw->qp_serial = mw->type == IB_MW_TYPE_2 ? qp->serial : 0;
		mw->bound = true;
		WRITE_ONCE(mw->gen, mw->gen + 1);
		spin_unlock(&mr->lock);
		mr = NULL;
	}
	if (mw->ibmw)
		mw->ibmw->rkey = mw->rkey;
	spin_unlock_bh(&mw->lock);
	if (old)
		rsim_mr_put(old);
	status = IB_WC_SUCCESS;
out_put_mr:
	if (mr)
		rsim_mr_put(mr);
out_put_mw:
	rsim_mw_put(mw);
	return status;
}

/**
 * rsim_mw_invalidate() - LOCAL_INV, or SEND_WITH_INV at the responder, of
 *	a window
 * @mw: the window @key names (held)
 * @qp: the executing QP (the responder's for @remote)
 * @key: the rkey to invalidate, variant included
 * @remote: SEND_WITH_INV: @qp must be the QP the window is bound to
 *
 * Context: process or softirq; takes the window's and its MR's locks.
 * Return: 0, or -EINVAL (a type 1 window, not bound, another key or PD,
 * another QP).
 */
int rsim_mw_invalidate(struct rsim_mw *mw, const struct rsim_qp *qp,
		       u32 key, bool remote)
{
	struct rsim_mr *old = NULL;
	int err = -EINVAL;

	spin_lock_bh(&mw->lock);
	if (mw->type == IB_MW_TYPE_2 && mw->bound && mw->rkey == key &&
	    mw->pd == qp->ibqp.pd &&
	    (!remote || mw->qp_serial == qp->serial)) {
		old = rsim_mw_unbind_locked(mw);
		err = 0;
	}
	spin_unlock_bh(&mw->lock);
	if (old)
		rsim_mr_put(old);
	return err;
}

/**
 * rsim_mw_lookup() - check a remote access through a window
 * @mw: the window the rkey names (held; on success @ref holds it too)
 * @qp: the responder
 * @key: the rkey, variant included
 * @addr: first address
 * @len: bytes, not 0
 * @access: IB_ACCESS_REMOTE_* the access needs
 * @ref: the range, as a range of the window's MR, on success
 *
 * Context: process or softirq.
 * Return: 0 or -EACCES.
 */
int rsim_mw_lookup(struct rsim_mw *mw, const struct rsim_qp *qp, u32 key,
		   u64 addr, u64 len, int access, struct rsim_mem_ref *ref)
{
	struct rsim_mr *mr;
	bool ok;

	spin_lock_bh(&mw->lock);
	mr = mw->mr;
	ok = mw->bound && mr && mw->rkey == key && mw->pd == qp->ibqp.pd &&
	     (mw->type != IB_MW_TYPE_2 || mw->qp_serial == qp->serial) &&
	     (mw->access & access) == access &&
	     rsim_range_in(mw->addr, mw->length, addr, len);
	if (ok) {
		spin_lock(&mr->lock);
		ok = mr->state == RSIM_MR_VALID;
		ref->off = addr - mr->reg.iova;
		ref->gen = mr->reg.gen;
		ref->mw_gen = mw->gen;
		spin_unlock(&mr->lock);
	}
	if (ok) {
		/* the window's reference keeps it: it is bound, locked */
		refcount_inc(&mr->ref);
		refcount_inc(&mw->ref);
		ref->mr = mr;
		ref->mw = mw;
	}
	spin_unlock_bh(&mw->lock);
	return ok ? 0 : -EACCES;
}

const struct ib_device_ops rsim_mw_ops = {
	.alloc_mw = rsim_alloc_mw,
	.dealloc_mw = rsim_dealloc_mw,

	INIT_RDMA_OBJ_SIZE(ib_mw, rsim_ibmw, ibmw),
};
