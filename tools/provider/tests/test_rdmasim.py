# SPDX-License-Identifier: (GPL-2.0 OR Linux-OpenIB)
"""
pyverbs tests of what is rdmasim's own (providers/rdmasim, the simulated
RDMA device of drivers/infiniband/sw/rdmasim): the exact limits the device
advertises, enforced to the unit by the kernel and by the provider, and
the provider's mapped rings (CQ, receive and send queues), which wrap many
times on small queues, with and without the rings (RSIM_NO_MAP=1: the
kernel's post and poll commands) and with a send doorbell on every post
(RSIM_RING_ALWAYS=1). They skip on any other device.
"""

import errno
import os
import unittest

from pyverbs.cq import CQ
from pyverbs.libibverbs_enums import ibv_qp_attr_mask, ibv_qp_type, \
    ibv_send_flags, ibv_wr_opcode
from pyverbs.pd import PD
from pyverbs.pyverbs_error import PyverbsRDMAError
from pyverbs.qp import QP, QPCap, QPInitAttr
from pyverbs.wr import SGE, RecvWR, SendWR
import pyverbs.device as d

from tests.base import RCResources, RDMATestCase
import tests.utils as u

RDMASIM_VENDOR_ID = 0xffffff
RDMASIM_VENDOR_PART_ID = 0x5153

# A device made with new_device and no attributes (the defaults of
# rsim_default_limits in drivers/infiniband/sw/rdmasim/dev.c)
RDMASIM_LIMITS = {
    'max_qp': 1024, 'max_qp_wr': 4096, 'max_sge': 16, 'max_cq': 1024,
    'max_cqe': 32768, 'max_mr': 16384, 'max_pd': 1024, 'max_srq': 1024,
    'max_srq_wr': 4096, 'max_ah': 4096, 'max_qp_rd_atom': 16,
    'max_qp_init_rd_atom': 16, 'max_mr_size': 1 << 40, 'max_pkeys': 16,
}
RDMASIM_MAX_INLINE = 256

# small queues, so that their rings wrap many times in one test
RING_DEPTH = 4
RING_ITERS = 64


def is_rdmasim_dev(ctx):
    attr = ctx.query_device()
    return attr.vendor_id == RDMASIM_VENDOR_ID and \
        attr.vendor_part_id == RDMASIM_VENDOR_PART_ID


class RdmasimTestCase(RDMATestCase):
    def setUp(self):
        super().setUp()
        with d.Context(name=self.dev_name) as ctx:
            if not is_rdmasim_dev(ctx):
                raise unittest.SkipTest('rdmasim only')

    def provider_env(self, name, value):
        """set the provider's variable <name> for the contexts this test
        makes (the provider reads it when a context is made)"""
        old = os.environ.get(name)
        os.environ[name] = value

        def restore():
            if old is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = old
        self.addCleanup(restore)


class RingResources(RCResources):
    """RC resources with queues of RING_DEPTH entries: a CQ shared by both
    directions, send and receive queues"""
    def __init__(self, dev_name, ib_port, gid_index, max_inline=0, **kwargs):
        self.max_inline = max_inline
        super().__init__(dev_name, ib_port, gid_index, **kwargs)

    def create_cq(self):
        self.cq = CQ(self.ctx, RING_DEPTH, None, None, 0)

    def create_qp_cap(self):
        return QPCap(max_send_wr=RING_DEPTH, max_recv_wr=RING_DEPTH,
                     max_inline_data=self.max_inline)


class RdmasimLimitsTest(RdmasimTestCase):
    def test_rdmasim_device_attrs(self):
        """The device advertises the limits of a default device"""
        with d.Context(name=self.dev_name) as ctx:
            attr = ctx.query_device()
            for name, value in RDMASIM_LIMITS.items():
                self.assertEqual(getattr(attr, name), value, name)

    def test_rdmasim_cq_bound(self):
        """A CQ of max_cqe entries is made, one of max_cqe + 1 is EINVAL"""
        with d.Context(name=self.dev_name) as ctx:
            max_cqe = ctx.query_device().max_cqe
            with CQ(ctx, max_cqe, None, None, 0):
                pass
            with self.assertRaises(PyverbsRDMAError) as ex:
                CQ(ctx, max_cqe + 1, None, None, 0)
            self.assertEqual(ex.exception.error_code, errno.EINVAL)

    def test_rdmasim_qp_bounds(self):
        """Each QP capability at its limit is granted, one past it is EINVAL"""
        with d.Context(name=self.dev_name) as ctx:
            attr = ctx.query_device()
            limits = {'max_send_wr': attr.max_qp_wr,
                      'max_recv_wr': attr.max_qp_wr,
                      'max_send_sge': attr.max_sge,
                      'max_recv_sge': attr.max_sge,
                      'max_inline_data': RDMASIM_MAX_INLINE}
            with PD(ctx) as pd, CQ(ctx, 16, None, None, 0) as cq:
                for name, limit in limits.items():
                    for value, ok in ((limit, True), (limit + 1, False)):
                        cap = QPCap(max_send_wr=1, max_recv_wr=1)
                        setattr(cap, name, value)
                        init = QPInitAttr(qp_type=ibv_qp_type.IBV_QPT_RC,
                                          scq=cq, rcq=cq, cap=cap)
                        if ok:
                            with QP(pd, init) as qp:
                                _, got = qp.query(ibv_qp_attr_mask.IBV_QP_CAP)
                                self.assertGreaterEqual(
                                    getattr(got.cap, name), value, name)
                            continue
                        with self.assertRaises(PyverbsRDMAError,
                                               msg=f'{name} {value}') as ex:
                            QP(pd, init)
                        self.assertEqual(ex.exception.error_code,
                                         errno.EINVAL, name)


class RdmasimRingTest(RdmasimTestCase):
    def setUp(self):
        super().setUp()
        self.iters = RING_ITERS

    def ring_traffic(self):
        self.create_players(RingResources)
        u.traffic(**self.traffic_args)

    def test_rdmasim_ring_wrap(self):
        """SENDs both ways on queues of 4: the mapped rings wrap 16 times"""
        self.ring_traffic()

    def test_rdmasim_ring_wrap_no_map(self):
        """The same through the kernel's post and poll commands"""
        self.provider_env('RSIM_NO_MAP', '1')
        self.ring_traffic()

    def test_rdmasim_ring_wrap_doorbell_always(self):
        """The same with a send doorbell on every post"""
        self.provider_env('RSIM_RING_ALWAYS', '1')
        self.ring_traffic()

    def inline_bound(self):
        """max_inline bytes inline arrive whole; one byte more is EINVAL at
        the post, and the QP goes on"""
        self.create_players(RingResources, max_inline=64)
        size = 64
        for sent, (length, ok) in enumerate(((size, True), (size + 1, False),
                                            (size, True))):
            data = bytes((sent * 7 + i) & 0xff for i in range(length))
            self.client.mr.write(data, length)
            sge = SGE(self.client.mr.buf, length, self.client.mr.lkey)
            wr = SendWR(opcode=ibv_wr_opcode.IBV_WR_SEND, num_sge=1, sg=[sge],
                        send_flags=ibv_send_flags.IBV_SEND_INLINE |
                        ibv_send_flags.IBV_SEND_SIGNALED)
            if not ok:
                with self.assertRaises(PyverbsRDMAError) as ex:
                    self.client.qp.post_send(wr)
                self.assertEqual(ex.exception.error_code, errno.EINVAL)
                continue
            rsge = SGE(self.server.mr.buf, self.server.msg_size,
                       self.server.mr.lkey)
            self.server.qp.post_recv(RecvWR(num_sge=1, sg=[rsge]))
            self.client.qp.post_send(wr)
            u.poll_cq(self.client.cq)
            u.poll_cq(self.server.cq)
            self.assertEqual(self.server.mr.read(length, 0), data)

    def test_rdmasim_inline_bound(self):
        """Inline data up to the QP's max_inline_data, mapped send queue"""
        self.inline_bound()

    def test_rdmasim_inline_bound_no_map(self):
        """Inline data up to the QP's max_inline_data, post command"""
        self.provider_env('RSIM_NO_MAP', '1')
        self.inline_bound()
