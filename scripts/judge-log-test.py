#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""The log judge's own test: judge-log.py against crafted logs and modules.

A "module" here is a relocatable object compiled with gcc from a C file
that declares its suites the way kunit_test_suites() does (a pointer per
struct kunit_suite in .kunit_test_suites, the name first), so deleting a
suite from the C source and recompiling is what the judge sees after
deleting one of rdmasim_kunit.ko's suites and rebuilding: make check must
fail. make check runs this first; it needs python3 and gcc only.
"""
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
SUITES = ['rsim_a', 'rsim_b', 'rsim_c']

MODULE_C = '''
struct kunit_case { void (*run_case)(void *); const char *name; };
struct kunit_suite {
	const char name[256];
	int (*suite_init)(struct kunit_suite *);
	struct kunit_case *test_cases;
};
static struct kunit_case cases[] = { { 0, "x" }, { 0 } };
%s
static struct kunit_suite *const suites[]
	__attribute__((used, section(".kunit_test_suites"))) = { %s };
'''
# a suite written with its fields in another order than rdmasim's: the
# judge before this one (a regex over the C source) did not see it
SUITE_C = {
    'rsim_a': 'static struct kunit_suite a = { .name = "rsim_a", .test_cases = cases };',
    'rsim_b': 'static struct kunit_suite b = { .test_cases = cases,\n\t.name = "rsim_b" };',
    'rsim_c': 'static struct kunit_suite c = {\n\t.test_cases = cases, .name = "rsim_c",\n};',
}

DOC = '''Testing
=======

KUnit suites
============

.. list-table::
   :header-rows: 1

   * - suite
     - what
%s
Next
====
'''


def module(tmp, suites, name='m'):
    c = os.path.join(tmp, name + '.c')
    with open(c, 'w') as f:
        f.write(MODULE_C % ('\n'.join(SUITE_C[s] for s in suites),
                            ', '.join('&' + s[-1] for s in suites)))
    ko = os.path.join(tmp, name + '.ko')
    subprocess.run(['gcc', '-c', '-O2', '-o', ko, c], check=True)
    return ko


def unique(tmp, name):
    n = len(os.listdir(tmp))
    return os.path.join(tmp, f'{n}-{name}')


def doc(tmp, suites):
    path = unique(tmp, 'testing.rst')
    with open(path, 'w') as f:
        f.write(DOC % ''.join(f'   * - ``{s}``\n     - the {s} suite\n' for s in suites))
    return path


def ktap(suites, fail=None, crash=None):
    out = ['RSIM-KTAP-BEGIN', 'KTAP version 1', f'1..{len(suites)}']
    for i, s in enumerate(suites, 1):
        out += ['    KTAP version 1', f'    # Subtest: {s}', '    1..2',
                '    ok 1 first']
        if s == crash:
            out += ['BUG: kernel NULL pointer dereference']
            return out
        if s == fail:
            out += ['    # second: EXPECTATION FAILED at x.c:1', '    Expected 1 == 2',
                    '    not ok 2 second', f'not ok {i} {s}']
        else:
            out += ['        KTAP version 1', '        # Subtest: second',
                    '        ok 1 p1', '        ok 2 p2', '    ok 2 second', f'ok {i} {s}']
    return out + ['RSIM-KTAP-END']


def log(tmp, body, selftest=('ok 1 one', 'ok 2 two'), plan=2, leak=()):
    lines = ['RSIM-INIT mode=kunit,selftest kernel=7.3.4', 'RSIM-PART kunit'] + body
    lines += ['RSIM-PART selftest'] + [f'RSIM-SELFTEST {s}' for s in selftest]
    lines += ['RSIM-PART finish']
    if leak is not None:
        lines += ['RSIM-KMEMLEAK-BEGIN', *leak, 'RSIM-KMEMLEAK-END']
    lines += [f'RSIM-SELFTEST 1..{plan}', 'RSIM-DONE fails=0']
    path = unique(tmp, 'uml.log')
    with open(path, 'w') as f:
        f.write(''.join(f'[{10 + i * 0.5:12.6f}] {line}\n' for i, line in enumerate(lines)))
    return path


CONF_C = '''
struct kunit_suite { const char name[256]; void *cases; };
static struct kunit_suite mr = { "rdma_conformance_mr" }, map = { "rdma_conformance_map" },
	bench = { "rdma_conformance_bench" };
static struct kunit_suite *const rcf_templates[] __attribute__((used)) = { &mr, &map, &bench };
static char *suites __attribute__((used)) = "mr,map";
'''


def conformance_module(tmp):
    """templates mr, map and bench; suites= defaults to mr,map"""
    c = os.path.join(tmp, 'conf.c')
    with open(c, 'w') as f:
        f.write(CONF_C)
    ko = os.path.join(tmp, 'conf.ko')
    subprocess.run(['gcc', '-c', '-O2', '-o', ko, c], check=True)
    return ko


def conformance(areas):
    out = ['RSIM-CONF-BEGIN', 'KTAP version 1', f'1..{len(areas)}',
           'rdma_conformance: target dev0: driver rdmasim, port 1, InfiniBand']
    for i, a in enumerate(areas, 1):
        out += ['    KTAP version 1', f'    # Subtest: rdma_conformance_{a}.dev0', '    1..1',
                f'    # {a}_rule: rule: the rule [x.c]', f'    ok 1 {a}_rule',
                f'ok {i} rdma_conformance_{a}.dev0']
    return out + ['RSIM-CONF-END']


FINDINGS = """# name | regexes
dir | different direction | rds_dma_hdr_free
lockdep | possible circular locking | rds_trans_sem
"""
PROBE_FINDING = """probe | scsi: Device not | ready to probe
"""

# a WARN with its DMA-API line, as the kernel prints one
DMA_WARN = ['------------[ cut here ]------------',
            'WARNING: kernel/dma/debug.c:1054 at check_unmap+0xa73/0xf9c',
            'DMA-API: rdmasim rdmasim.0.auto: device driver frees DMA memory with '
            'different direction',
            'Call Trace:', ' [<e0ad88f3>] rds_dma_hdr_free+0x47/0x61 [rds_rdma]',
            '---[ end trace 0000000000000000 ]---',
            'DMA-API: Mapped at:', ' dma_map_phys+0x1be/0x1d0']
LEAK_SUMMARY = 'kmemleak: 1 new suspected memory leaks (see /sys/kernel/debug/kmemleak)'
LEAK_PROBE = ['unreferenced object 0x6535d680 (size 64):',
              '  73 63 73 69 3a 20 44 65 76 69 63 65 20 6e 6f 74  scsi: Device not',
              '  20 72 65 61 64 79 20 74 6f 20 70 72 6f 62 65 0a   ready to probe.']
LEAK_OTHER = ['unreferenced object 0x6535d700 (size 32):',
              '  backtrace:', '    rsim_alloc_pd+0x10/0x20 [rdmasim]']
LOCKDEP = ['WARNING: possible circular locking dependency detected',
           '(rds_trans_sem){++++}-{3:3}, at: rds_trans_get_preferred+0x92/0x131',
           'Call Trace:', ' [<e0a4d61d>] rds_trans_get_preferred+0x92/0x131 [rds]']


def findings(tmp, text=FINDINGS):
    path = unique(tmp, 'findings')
    with open(path, 'w') as f:
        f.write(text)
    return path


def judge(*args):
    res = subprocess.run([sys.executable, os.path.join(HERE, 'judge-log.py'), *args],
                         capture_output=True, text=True)
    return res.returncode, res.stdout + res.stderr


def main():
    fails = 0
    with tempfile.TemporaryDirectory() as tmp:
        ko = module(tmp, SUITES)
        rst = doc(tmp, SUITES)
        good = log(tmp, ktap(SUITES))
        cases = [
            # (what, want rc, want text, judge-log.py arguments)
            ('every suite passed, clean log', 0, 'run clean',
             [good, '--kunit', ko, '--doc', rst, '--selftest']),
            ('suites in any field order are found', 0, 'rsim_c',
             [good, '--kunit', ko]),
            ('a suite missing from the run', 1, 'suite rsim_b is missing',
             [log(tmp, ktap(['rsim_a', 'rsim_c'])), '--kunit', ko, '--doc', rst]),
            ('a suite deleted from the C source, module rebuilt', 1,
             'suite rsim_b is documented in',
             [log(tmp, ktap(['rsim_a', 'rsim_c'])), '--kunit',
              module(tmp, ['rsim_a', 'rsim_c'], 'deleted'), '--doc', rst]),
            ('a suite the documentation does not list', 1, 'rsim_c of',
             [good, '--kunit', ko, '--doc', doc(tmp, ['rsim_a', 'rsim_b'])]),
            ('a failed case', 1, "suite rsim_b: FAIL, failed: ['second']",
             [log(tmp, ktap(SUITES, fail='rsim_b')), '--kunit', ko]),
            ('a crash inside a suite', 1, 'suite rsim_b: CRASHED',
             [log(tmp, ktap(SUITES, crash='rsim_b')), '--kunit', ko]),
            ('a glob: only the suites it matches', 0, 'run clean',
             [log(tmp, ktap(['rsim_b'])), '--kunit', ko, '--glob', 'rsim_b']),
            ('a glob, and a suite it excludes ran', 1, 'rsim_a ran but',
             [good, '--kunit', ko, '--glob', 'rsim_b']),
            ('a WARN in a passing run', 1, 'WARN or lockdep report',
             [log(tmp, ktap(SUITES) + ['WARNING: CPU: 0 PID: 1 at x.c:1']), '--kunit', ko]),
            ('a kmemleak report', 1, 'kmemleak lists objects',
             [log(tmp, ktap(SUITES), leak=['unreferenced obj']), '--kunit', ko]),
            ('no kmemleak list from the debug kernel', 1, 'kmemleak was not read',
             [log(tmp, ktap(SUITES), leak=None), '--kunit', ko]),
            ('no kmemleak list from the non-debug kernel', 0, 'run clean',
             [log(tmp, ktap(SUITES), leak=None), '--kunit', ko, '--nodebug']),
            ('a kmemleak report from the non-debug kernel', 1, 'kmemleak lists objects',
             [log(tmp, ktap(SUITES), leak=['unreferenced obj']), '--kunit', ko,
              '--nodebug']),
            ('a failed selftest line', 1, 'selftest: not ok 2 two',
             [log(tmp, [], selftest=('ok 1 one', 'not ok 2 two')), '--selftest']),
            ('selftest lines lost', 1, '1 results, plan 2',
             [log(tmp, [], selftest=('ok 1 one',)), '--selftest']),
            ('a failed setup check in a KUnit-only run', 1, 'selftest: not ok 2 two',
             [log(tmp, ktap(SUITES), selftest=('ok 1 one', 'not ok 2 two')), '--kunit', ko]),
            ('no KTAP at all', 1, 'suite rsim_a is missing',
             [log(tmp, []), '--kunit', ko]),
            ('conformance: every suite the module runs by default', 0, 'run clean',
             [log(tmp, conformance(['mr', 'map'])), '--conformance', 'dev0',
              '--conformance-module', conformance_module(tmp)]),
            ('conformance: a suite of the module missing', 1,
             'suite rdma_conformance_map.dev0 is missing',
             [log(tmp, conformance(['mr'])), '--conformance', 'dev0',
              '--conformance-module', conformance_module(tmp)]),
            ('known findings: their reports accepted', 0, 'run clean',
             [log(tmp, LOCKDEP + ['some line'] + DMA_WARN), '--findings', findings(tmp)]),
            ('a known finding that no longer shows', 1, 'known finding lockdep did not show',
             [log(tmp, DMA_WARN), '--findings', findings(tmp)]),
            ('--findings-may-show: a finding that does not show is no failure', 0,
             'run clean', [log(tmp, DMA_WARN), '--findings', findings(tmp),
                           '--findings-may-show']),
            ('kmemleak: the summary line of known objects only is theirs', 0, 'run clean',
             [log(tmp, [LEAK_SUMMARY] + LEAK_PROBE), '--findings',
              findings(tmp, PROBE_FINDING), '--findings-may-show']),
            ('kmemleak: an unknown object beside a known one fails', 1,
             'kmemleak report at line',
             [log(tmp, [LEAK_SUMMARY] + LEAK_PROBE + LEAK_OTHER), '--findings',
              findings(tmp, PROBE_FINDING), '--findings-may-show']),
            ("blktests' own cleanup warning is no kernel report", 0, 'run clean',
             [log(tmp, ['WARNING: Test did not clean up port: 0'])]),
            ('--findings-may-show: another report still fails', 1, 'WARN report at line',
             [log(tmp, DMA_WARN + ['------------[ cut here ]------------',
                                   'WARNING: x.c:1 at f+0x1/0x2']),
              '--findings', findings(tmp), '--findings-may-show']),
            ('another report beside the known ones', 1, 'WARN report at line',
             [log(tmp, LOCKDEP + DMA_WARN + ['------------[ cut here ]------------',
                                             'WARNING: x.c:1 at f+0x1/0x2']),
              '--findings', findings(tmp)]),
            ('a known report outside its own lines does not cover another', 1,
             'DMA-API report',
             [log(tmp, LOCKDEP + DMA_WARN + ['DMA-API: rdmasim x: device driver '
                                             'tries to sync DMA memory it has not '
                                             'allocated']),
              '--findings', findings(tmp)]),
        ]
        for what, want_rc, want, args in cases:
            rc, out = judge(*args)
            ok = rc == want_rc and want in out
            fails += not ok
            print(f'{"ok" if ok else "FAILED"}: {what}')
            if not ok:
                print(f'  want rc {want_rc} and "{want}", got rc {rc}:\n' + out)
    print('judge-log.py: ' + ('every case as expected' if not fails else f'{fails} case(s) wrong'))
    return 1 if fails else 0


if __name__ == '__main__':
    sys.exit(main())
