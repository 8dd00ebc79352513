/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rdmasim's KUnit modules (rdmasim_kunit.ko, rdma_conformance.ko): user
 * memory for a case, in a mm of the case's own.
 */
#ifndef RDMASIM_KUNIT_MM_H
#define RDMASIM_KUNIT_MM_H

#include <kunit/test.h>
#include <linux/kthread.h>
#include <linux/mman.h>
#include <linux/sched/mm.h>

/*
 * kunit_vm_mmap() gives a kthread without an mm a new one through
 * kthread_use_mm() and never calls kthread_unuse_mm() (it cannot: a case's
 * cleanup runs in another kthread). The kthread's exit then drops every
 * reference to the mm but the one kthread_use_mm() took, and the mm leaks:
 * kmemleak reports one per case on 6.12, and 7.x's UML hides it by keeping
 * every mm on a list. Attached here first, with that reference given back
 * at once, the mm is held the way a process holds its own: by ->mm alone,
 * which the kthread's exit drops. kunit_vm_mmap() then maps into it.
 * mm_alloc() and arch_pick_mmap_layout() are in the KUnit namespace
 * (RSIM_IMPORT_KUNIT_NS()).
 */
static inline void rsim_kunit_attach_mm(struct kunit *test)
{
	struct mm_struct *mm;

	if (current->mm)
		return;
	mm = mm_alloc();
	KUNIT_ASSERT_NOT_NULL(test, mm);
	mm->task_size = TASK_SIZE;
	arch_pick_mmap_layout(mm, &current->signal->rlim[RLIMIT_STACK]);
	kthread_use_mm(mm);
	mmdrop(mm);
}

/**
 * rsim_kunit_vm_mmap() - anonymous user memory in the test's own mm
 * @test: the test; the mapping goes with it, the mm with its kthread
 * @len: bytes
 * @prot: PROT_*
 *
 * Return: the user address; the case fails if there is none.
 */
static inline unsigned long rsim_kunit_vm_mmap(struct kunit *test, size_t len,
					       unsigned long prot)
{
	unsigned long uaddr;

	rsim_kunit_attach_mm(test);
	uaddr = kunit_vm_mmap(test, NULL, 0, len, prot,
			      MAP_ANONYMOUS | MAP_PRIVATE, 0);
	KUNIT_ASSERT_NE_MSG(test, uaddr, 0, "no user memory for the test");
	return uaddr;
}

#endif /* RDMASIM_KUNIT_MM_H */
