// SPDX-License-Identifier: GPL-2.0-only
/*
 * Suite rdmasim_dmah: DMA handles. Every combination of the attributes a
 * handle can be given (which ones, CPU id, processing hint, memory type)
 * against the errno userspace would get; an MR that holds its handle;
 * dealloc refused while it does. The data path's use of the hints is in
 * rdmasim_dmah_dp. On a kernel without DMA handles every case skips.
 */

#include <linux/cpumask.h>
#include <linux/slab.h>

#include "helpers.h"

#if RSIM_HAVE_DMAH_OPS

#define F_CPU	BIT(IB_DMAH_CPU_ID_EXISTS)
#define F_MEM	BIT(IB_DMAH_MEM_TYPE_EXISTS)
#define F_PH	BIT(IB_DMAH_PH_EXISTS)

/* the CPU ids a row names */
enum dmah_cpu { CPU_OK, CPU_NOT_ALLOWED, CPU_NR, CPU_FFFF, CPU_NKINDS };
/* the memory types: volatile, persistent, one the parser does not know */
#define MEM_NKINDS	3
/* processing hints 0..3 and one past */
#define PH_NKINDS	5

#define DMAH_NROWS	(8 * CPU_NKINDS * PH_NKINDS * MEM_NKINDS)

/**
 * struct dmah_row - one combination
 * @fields: the attributes given (the userspace comp_mask)
 * @cpu: which CPU id
 * @ph: the processing hint
 * @mem: the memory type
 */
struct dmah_row {
	u8 fields;
	enum dmah_cpu cpu;
	u8 ph;
	u8 mem;
};

static struct dmah_row dmah_row(unsigned int i)
{
	struct dmah_row r;

	r.mem = i % MEM_NKINDS;
	i /= MEM_NKINDS;
	r.ph = i % PH_NKINDS;
	i /= PH_NKINDS;
	r.cpu = i % CPU_NKINDS;
	r.fields = i / CPU_NKINDS;
	return r;
}

/*
 * The errno userspace meets, in the order it meets the checks: the ioctl
 * parser (an unknown memory type: EOPNOTSUPP), the core's handler (CPU id
 * >= nr_cpu_ids or PH > 3: EINVAL; a CPU the caller may not use: EPERM),
 * then mlx5's rules (no PH; CPU without memory type or the other way
 * round: EINVAL). An attribute that is not given is not checked.
 */
static int dmah_expected(const struct dmah_row *r)
{
	bool cpu = r->fields & F_CPU, mem = r->fields & F_MEM;
	bool ph = r->fields & F_PH;

	if (mem && r->mem == 2)
		return -EOPNOTSUPP;
	if (cpu && (r->cpu == CPU_NR || r->cpu == CPU_FFFF))
		return -EINVAL;
	if (cpu && r->cpu == CPU_NOT_ALLOWED)
		return -EPERM;
	if (ph && r->ph > 3)
		return -EINVAL;
	if (!ph || cpu != mem)
		return -EINVAL;
	return 0;
}

/* the CPU id a row names */
static u32 dmah_cpu_id(enum dmah_cpu cpu)
{
	switch (cpu) {
	case CPU_OK:
	case CPU_NOT_ALLOWED:
		return cpumask_first(current->cpus_ptr);
	case CPU_NR:
		return nr_cpu_ids;
	default:
		return 0xffff;
	}
}

static void dmah_name(const struct dmah_row *r, char *name, size_t len)
{
	static const char * const cpus[] = { "cpu0", "cpu_not_allowed",
					     "cpu_nr_cpu_ids", "cpu_0xffff" };
	static const char * const mems[] = { "vm", "pm", "mem2" };

	snprintf(name, len, "%s%s%s_%s_ph%u_%s",
		 r->fields & F_CPU ? "C" : "-", r->fields & F_PH ? "P" : "-",
		 r->fields & F_MEM ? "M" : "-", cpus[r->cpu], r->ph,
		 mems[r->mem]);
}

/*
 * Each of the 480 rows through rsim_dmah_check() with the allowed CPUs the
 * row wants (its CPU excluded for "not allowed"), and, where the test's
 * own CPUs decide, through the device's alloc_dmah: the same errno, a
 * handle on success that dealloc_dmah takes back, the DMA handle count as
 * before. One case for the table (a case per row costs 60 ms in the debug
 * kernel); a failure names its row.
 */
static void rsim_dmah_test_attributes(struct kunit *test)
{
	struct rsim_dev *rsim = rsim_kunit_shared_dev(test);
	struct ib_device *ibdev = &rsim->ibdev;
	int count = rsim_res_count(rsim, RSIM_RES_DMAH);
	unsigned int i, accepted = 0;
	cpumask_var_t allowed;
	char name[48];

	KUNIT_ASSERT_TRUE(test, zalloc_cpumask_var(&allowed, GFP_KERNEL));
	for (i = 0; i < DMAH_NROWS; i++) {
		struct dmah_row r = dmah_row(i);
		int want = dmah_expected(&r), got;
		struct ib_dmah *d = rdma_zalloc_drv_obj(ibdev, ib_dmah);

		KUNIT_ASSERT_NOT_NULL(test, d);
		dmah_name(&r, name, sizeof(name));
		d->device = ibdev;
		d->valid_fields = r.fields;
		d->cpu_id = dmah_cpu_id(r.cpu);
		d->ph = r.ph;
		d->mem_type = r.mem;
		cpumask_copy(allowed, current->cpus_ptr);
		if (r.cpu == CPU_NOT_ALLOWED)
			cpumask_clear_cpu(d->cpu_id, allowed);
		KUNIT_EXPECT_EQ_MSG(test, rsim_dmah_check(d, allowed), want,
				    "row %s", name);
		if (r.cpu != CPU_NOT_ALLOWED) {
			got = ibdev->ops.alloc_dmah(d, NULL);
			KUNIT_EXPECT_EQ_MSG(test, got, want, "row %s", name);
			KUNIT_EXPECT_EQ_MSG(test,
					    rsim_res_count(rsim, RSIM_RES_DMAH),
					    count + !got, "row %s", name);
			if (!got) {
				accepted++;
				KUNIT_EXPECT_EQ(test,
						ibdev->ops.dealloc_dmah(d, NULL),
						0);
			}
		}
		kfree(d);
	}
	free_cpumask_var(allowed);
	kunit_info(test, "%u rows, %u handles made and freed\n", DMAH_NROWS,
		   accepted);
	KUNIT_EXPECT_EQ(test, rsim_res_count(rsim, RSIM_RES_DMAH), count);
}

/**
 * struct dmah_named_case - a row worth reading on its own
 * @name: case name
 * @fields: attributes given
 * @cpu: which CPU id
 * @ph: processing hint
 * @mem: memory type
 * @err: the errno userspace gets
 */
struct dmah_named_case {
	const char *name;
	u8 fields;
	enum dmah_cpu cpu;
	u8 ph;
	u8 mem;
	int err;
};

static const struct dmah_named_case dmah_named_cases[] = {
	{ "ph_only", F_PH, CPU_OK, 0, 0, 0 },
	{ "ph_3_only", F_PH, CPU_OK, 3, 0, 0 },
	{ "cpu_vm_ph", F_CPU | F_MEM | F_PH, CPU_OK, 1, TPH_MEM_TYPE_VM, 0 },
	{ "cpu_pm_ph", F_CPU | F_MEM | F_PH, CPU_OK, 2, TPH_MEM_TYPE_PM, 0 },
	{ "nothing", 0, CPU_OK, 0, 0, -EINVAL },
	{ "no_ph", F_CPU | F_MEM, CPU_OK, 0, 0, -EINVAL },
	{ "ph_4", F_PH, CPU_OK, 4, 0, -EINVAL },
	{ "cpu_without_mem", F_CPU | F_PH, CPU_OK, 0, 0, -EINVAL },
	{ "mem_without_cpu", F_MEM | F_PH, CPU_OK, 0, 0, -EINVAL },
	{ "cpu_nr_cpu_ids", F_CPU | F_MEM | F_PH, CPU_NR, 0, 0, -EINVAL },
	{ "cpu_0xffff", F_CPU | F_MEM | F_PH, CPU_FFFF, 0, 0, -EINVAL },
	{ "mem_type_2", F_CPU | F_MEM | F_PH, CPU_OK, 0, 2, -EOPNOTSUPP },
	{ "mem_type_2_before_cpu", F_CPU | F_MEM | F_PH, CPU_FFFF, 0, 2,
	  -EOPNOTSUPP },
};

static void dmah_named_desc(const struct dmah_named_case *c, char *desc)
{
	strscpy(desc, c->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(dmah_named, dmah_named_cases, dmah_named_desc);

/* The rows above, each through alloc_dmah with its errno. */
static void rsim_dmah_test_named(struct kunit *test)
{
	const struct dmah_named_case *c = test->param_value;
	struct rsim_dev *rsim = rsim_kunit_shared_dev(test);
	struct dmah_row r = { c->fields, c->cpu, c->ph, c->mem };
	struct ib_dmah *h;

	KUNIT_EXPECT_EQ(test, dmah_expected(&r), c->err);
	h = rsim_kunit_dmah(test, rsim, c->fields, dmah_cpu_id(c->cpu), c->mem,
			    c->ph);
	KUNIT_EXPECT_EQ(test, PTR_ERR_OR_ZERO(h), c->err);
}

/*
 * A CPU outside the caller's allowed CPUs: EPERM from the check and, with
 * two CPUs online, from alloc_dmah of a thread whose affinity excludes the
 * other CPU.
 */
static void rsim_dmah_test_cpu_not_allowed(struct kunit *test)
{
	struct ib_dmah d = {
		.valid_fields = F_CPU | F_MEM | F_PH,
		.cpu_id = cpumask_first(current->cpus_ptr),
	};
	cpumask_var_t allowed;

	KUNIT_ASSERT_TRUE(test, zalloc_cpumask_var(&allowed, GFP_KERNEL));
	cpumask_copy(allowed, current->cpus_ptr);
	cpumask_clear_cpu(d.cpu_id, allowed);
	KUNIT_EXPECT_EQ(test, rsim_dmah_check(&d, allowed), -EPERM);
	free_cpumask_var(allowed);
}

static void dmah_restore_affinity(void *mask)
{
	set_cpus_allowed_ptr(current, mask);
	free_cpumask_var(mask);
}

static void rsim_dmah_test_affinity(struct kunit *test)
{
	struct rsim_dev *rsim = rsim_kunit_shared_dev(test);
	struct ib_dmah *h;
	cpumask_var_t saved;
	int here, other;

	if (num_online_cpus() < 2)
		kunit_skip(test, "needs two CPUs online (make check's smp part)");
	KUNIT_ASSERT_TRUE(test, alloc_cpumask_var(&saved, GFP_KERNEL));
	cpumask_copy(saved, current->cpus_ptr);
	KUNIT_ASSERT_EQ(test, 0,
			kunit_add_action_or_reset(test, dmah_restore_affinity,
						  saved));
	here = raw_smp_processor_id();
	other = cpumask_any_but(cpu_online_mask, here);
	KUNIT_ASSERT_EQ(test, set_cpus_allowed_ptr(current, cpumask_of(here)),
			0);
	h = rsim_kunit_dmah(test, rsim, F_CPU | F_MEM | F_PH, other,
			    TPH_MEM_TYPE_VM, 0);
	KUNIT_EXPECT_EQ(test, PTR_ERR_OR_ZERO(h), -EPERM);
	h = rsim_kunit_dmah(test, rsim, F_CPU | F_MEM | F_PH, here,
			    TPH_MEM_TYPE_VM, 0);
	KUNIT_EXPECT_EQ(test, PTR_ERR_OR_ZERO(h), 0);
}

/* Attribute bits the core does not define are refused. */
static void rsim_dmah_test_unknown_field(struct kunit *test)
{
	struct ib_dmah d = { .valid_fields = F_PH | BIT(3) };

	KUNIT_EXPECT_EQ(test, rsim_dmah_check(&d, cpu_possible_mask),
			-EINVAL);
	d.valid_fields = F_PH | BIT(7);
	KUNIT_EXPECT_EQ(test, rsim_dmah_check(&d, cpu_possible_mask),
			-EINVAL);
}

/*
 * An MR registered with a handle holds it: dealloc_dmah is refused with
 * EBUSY until the MR is deregistered; a handle can serve several MRs.
 * Without a handle an MR holds nothing.
 */
static void rsim_dmah_test_mr_holds_handle(struct kunit *test)
{
	struct rsim_dev *rsim = rsim_kunit_shared_dev(test);
	struct ib_pd *pd = rsim_kunit_pd(test, rsim);
	struct ib_dmah *h;
	struct ib_mr *mr[2];
	unsigned long uaddr;
	int i;

	h = rsim_kunit_dmah(test, rsim, F_CPU | F_MEM | F_PH,
			    cpumask_first(current->cpus_ptr), TPH_MEM_TYPE_VM,
			    2);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, h);
	for (i = 0; i < 2; i++) {
		mr[i] = rsim_kunit_user_mr(test, pd, 2 * PAGE_SIZE,
					   IB_ACCESS_LOCAL_WRITE, h, &uaddr);
		KUNIT_ASSERT_NOT_ERR_OR_NULL(test, mr[i]);
		KUNIT_EXPECT_PTR_EQ(test, to_rsim_mr(mr[i])->dmah, h);
		KUNIT_EXPECT_EQ(test, to_rsim_mr(mr[i])->hints.ph, 2);
		KUNIT_EXPECT_FALSE(test, to_rsim_mr(mr[i])->hints.pmem);
	}
	KUNIT_EXPECT_EQ(test, atomic_read(&h->usecnt), 2);
	KUNIT_EXPECT_EQ(test, rsim->ibdev.ops.dealloc_dmah(h, NULL), -EBUSY);
	rsim_kunit_mr_release(test, mr[0]);
	KUNIT_EXPECT_EQ(test, atomic_read(&h->usecnt), 1);
	KUNIT_EXPECT_EQ(test, rsim->ibdev.ops.dealloc_dmah(h, NULL), -EBUSY);
	rsim_kunit_mr_release(test, mr[1]);
	KUNIT_EXPECT_EQ(test, atomic_read(&h->usecnt), 0);

	/* an MR without a handle: no hints */
	mr[0] = rsim_kunit_user_mr(test, pd, PAGE_SIZE, IB_ACCESS_LOCAL_WRITE,
				   NULL, &uaddr);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, mr[0]);
	KUNIT_EXPECT_NULL(test, to_rsim_mr(mr[0])->dmah);
	KUNIT_EXPECT_EQ(test, to_rsim_mr(mr[0])->hints.cpu, -1);
	KUNIT_EXPECT_EQ(test, to_rsim_mr(mr[0])->hints.ph, -1);
}

static struct kunit_case rsim_dmah_test_cases[] = {
	KUNIT_CASE(rsim_dmah_test_attributes),
	KUNIT_CASE_PARAM(rsim_dmah_test_named, dmah_named_gen_params),
	KUNIT_CASE(rsim_dmah_test_cpu_not_allowed),
	KUNIT_CASE(rsim_dmah_test_affinity),
	KUNIT_CASE(rsim_dmah_test_unknown_field),
	KUNIT_CASE(rsim_dmah_test_mr_holds_handle),
	RSIM_KUNIT_NO_LEFTOVERS,
	{}
};

#else /* no DMA handles in this kernel */

static void rsim_dmah_test_absent(struct kunit *test)
{
	kunit_skip(test,
		   "this kernel has no DMA handles (struct ib_dmah, alloc_dmah: Linux 6.17)");
}

static struct kunit_case rsim_dmah_test_cases[] = {
	KUNIT_CASE(rsim_dmah_test_absent),
	{}
};

#endif

static struct kunit_suite rsim_dmah_test_suite = {
	.name = "rdmasim_dmah",
	.suite_init = rsim_kunit_suite_init,
	.test_cases = rsim_dmah_test_cases,
};

kunit_test_suite(rsim_dmah_test_suite);
