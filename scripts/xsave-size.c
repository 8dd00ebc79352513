// SPDX-License-Identifier: GPL-2.0-only
/*
 * xsave-size: print the size in bytes of this CPU's XSAVE area for the
 * features the host kernel enabled (CPUID leaf 0xd, sub-leaf 0, EBX: what
 * PTRACE_GETREGSET of NT_X86_XSTATE returns), or 0 without XSAVE.
 * scripts/check-6.12.sh compares it with what UML 6.12 keeps per thread.
 */
#include <cpuid.h>
#include <stdio.h>

int main(void)
{
	unsigned int a, b, c, d;

	if (!__get_cpuid(1, &a, &b, &c, &d) || !(c & bit_OSXSAVE)) {
		puts("0");
		return 0;
	}
	__cpuid_count(0xd, 0, a, b, c, d);
	printf("%u\n", b);
	return 0;
}
