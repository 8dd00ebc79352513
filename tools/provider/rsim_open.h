/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * tools/provider's test programs (rsim_hold, rsim_fuzz): open an RDMA
 * device by its name, through libibverbs.
 */
#ifndef RSIM_OPEN_H
#define RSIM_OPEN_H

#include <errno.h>
#include <string.h>

#include <infiniband/verbs.h>

/* the context of device @name, or NULL with errno set (ENODEV: none) */
static inline struct ibv_context *rsim_open_device(const char *name)
{
	struct ibv_device **list, *dev = NULL;
	struct ibv_context *ctx = NULL;
	int i, n, err = ENODEV;

	list = ibv_get_device_list(&n);
	if (!list)
		return NULL;
	for (i = 0; i < n && !dev; i++)
		if (!strcmp(ibv_get_device_name(list[i]), name))
			dev = list[i];
	if (dev) {
		ctx = ibv_open_device(dev);
		err = errno;
	}
	ibv_free_device_list(list);
	if (!ctx)
		errno = err;
	return ctx;
}

#endif /* RSIM_OPEN_H */
