/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rdmasim KUnit fixtures. Everything a helper acquires is released by a
 * KUnit action registered at once, so an aborted case leaks nothing.
 */
#ifndef RDMASIM_KUNIT_HELPERS_H
#define RDMASIM_KUNIT_HELPERS_H

#include <kunit/test.h>
#include <rdmasim/kunit-mm.h>
#include <rdma/ib_verbs.h>

#include "rdmasim.h"

/**
 * struct rsim_kunit_counts - a snapshot of a device's counters
 * @res: live objects per type
 * @refused: refusals at the limit per type
 * @injected: injected failures per fault site
 */
struct rsim_kunit_counts {
	int res[RSIM_RES_NR];
	int refused[RSIM_RES_NR];
	int injected[RSIM_FAULT_NR];
};

struct rsim_dev *rsim_kunit_dev(struct kunit *test,
				const struct rsim_dev_config *cfg);
struct rsim_dev *rsim_kunit_shared_dev(struct kunit *test);
int rsim_kunit_shared_create(void);
void rsim_kunit_shared_destroy(void);
int rsim_kunit_suite_init(struct kunit_suite *suite);
void rsim_kunit_test_no_leftovers(struct kunit *test);

/*
 * Every suite starts from the shared device's counters and ends with
 * RSIM_KUNIT_NO_LEFTOVERS: the case fails if a case left objects behind.
 */
#define RSIM_KUNIT_NO_LEFTOVERS KUNIT_CASE(rsim_kunit_test_no_leftovers)
u32 rsim_kunit_new_id(void);
struct ib_pd *rsim_kunit_pd(struct kunit *test, struct rsim_dev *rsim);
struct ib_cq *rsim_kunit_cq(struct kunit *test, struct rsim_dev *rsim,
			    int cqe);
struct ib_mr *rsim_kunit_mr(struct kunit *test, struct ib_pd *pd,
			    enum ib_mr_type type, u32 max_num_sg);
/*
 * Wait until the device's dispatcher has run the handlers queued so far
 * (event.c: handlers of objects other than a verb's own QP and CQs).
 */
static inline void rsim_kunit_events_flush(struct rsim_dev *rsim)
{
	flush_work(&rsim->ev_work);
}

int rsim_kunit_cq_wait(struct ib_cq *cq, struct ib_wc *wc, int n,
		       unsigned int ms);

/**
 * struct rsim_kunit_ev_count - a device's asynchronous events on port 1,
 *	counted by type (rsim_kunit_ev_count())
 * @h: the handler
 * @n: events seen, by enum ib_event_type
 */
struct rsim_kunit_ev_count {
	struct ib_event_handler h;
	atomic_t n[32];
};

struct rsim_kunit_ev_count *rsim_kunit_ev_count(struct kunit *test,
						struct rsim_dev *rsim);
int rsim_kunit_ev_seen(struct rsim_kunit_ev_count *e,
		       enum ib_event_type type);
int rsim_kunit_ud_to_rts(struct ib_qp *qp, u32 qkey, u16 pkey_index);
struct ib_dmah *rsim_kunit_dmah(struct kunit *test, struct rsim_dev *rsim,
				u8 fields, u32 cpu, u32 mem_type, u8 ph);
struct ib_mr *rsim_kunit_user_mr(struct kunit *test, struct ib_pd *pd,
				 size_t len, int access, struct ib_dmah *dmah,
				 unsigned long *uaddr);
void rsim_kunit_mr_release(struct kunit *test, struct ib_mr *mr);
void rsim_kunit_snapshot(struct rsim_dev *rsim, struct rsim_kunit_counts *c);
void rsim_kunit_expect_master_sm_lid(struct kunit *test, struct rsim_dev *rsim,
				     u16 sm_lid);
void rsim_kunit_expect_counts(struct kunit *test, struct rsim_dev *rsim,
			      const struct rsim_kunit_counts *before);

#endif /* RDMASIM_KUNIT_HELPERS_H */
