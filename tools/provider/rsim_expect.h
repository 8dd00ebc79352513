/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * tools/provider's rule checkers (rsim_odp, rsim_xrc): one
 * "<tag> <case> <result>" line per case, a "FAIL <case>: ..." line for
 * every expectation that does not hold, counted in rsim_failures. The
 * program defines RSIM_EXPECT_TAG (its lines' first word) before it
 * includes this.
 */
#ifndef RSIM_EXPECT_H
#define RSIM_EXPECT_H

#include <errno.h>
#include <stdio.h>

#include <infiniband/verbs.h>

static int rsim_failures;

static inline void fail(const char *what, const char *fmt, long a, long b)
{
	printf("FAIL %s: ", what);
	printf(fmt, a, b);
	printf("\n");
	rsim_failures++;
}

/* an errno's name for the result lines */
static inline const char *ename(int e)
{
	switch (e) {
	case 0: return "0";
	case EINVAL: return "EINVAL";
	case EPERM: return "EPERM";
	case EOPNOTSUPP: return "EOPNOTSUPP";
	case EFAULT: return "EFAULT";
	case ENOENT: return "ENOENT";
	case ENOMEM: return "ENOMEM";
	default: return "other";
	}
}

static inline void expect_errno(const char *what, int got, int want)
{
	printf(RSIM_EXPECT_TAG " %s %s\n", what, ename(got));
	if (got != want)
		fail(what, "errno %ld, want %ld", got, want);
}

/* a completion's status (-1: none came) */
static inline void expect_status(const char *what, int got, int want)
{
	printf(RSIM_EXPECT_TAG " %s %s\n", what, got == want ? "ok" :
	       got < 0 ? "no-completion" : ibv_wc_status_str(got));
	if (got != want)
		fail(what, "status %ld, want %ld", got, want);
}

#endif /* RSIM_EXPECT_H */
