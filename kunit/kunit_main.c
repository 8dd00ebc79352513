// SPDX-License-Identifier: GPL-2.0-only
/*
 * rdmasim_kunit.ko: the per-component KUnit suites of rdmasim. Loading the
 * module runs them (KTAP on the console and in debugfs/kunit/).
 */

#include <linux/module.h>

#include "helpers.h"

static int __init rsim_kunit_init(void)
{
	/* the suites run after this returns, on the module notifier */
	return rsim_kunit_shared_create();
}

static void __exit rsim_kunit_exit(void)
{
	rsim_kunit_shared_destroy();
}

module_init(rsim_kunit_init);
module_exit(rsim_kunit_exit);

MODULE_DESCRIPTION("KUnit suites for rdmasim");
MODULE_AUTHOR("rdmasim developers");
MODULE_LICENSE("GPL");
MODULE_VERSION(RSIM_VERSION);
RSIM_IMPORT_KUNIT_NS();
