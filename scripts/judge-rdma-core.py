#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Judge rdma-core's own tests on rdmasim0 against rxe0.

usage: judge-rdma-core.py LOG... --dev DEV --peer DEV [--out DIR] [--some]
                          [--summary FILE]

Each LOG is the console of a UML boot that ran scripts/guest/rdma-core-tests.sh
(rdmasim0's in a debug boot, rxe0's in a boot of the non-debug kernel or
the cached log of an earlier one):
one "RSIM-RDMACORE <dev> <ok|skip|fail|error> <test id> [reason]" line per
test and a "RSIM-RDMACORE <dev> total ..." line per device
(scripts/guest/rdma-core-tests.py). DEV (rdmasim0) must have run every test to
the end, with no failure or error, more passes than PEER (rxe0) in the
other log, and a reason on every skip (unittest's skip message, which
names what the device lacks); --some (a run of some tests only, picked
with RSIM_RDMA_CORE_TESTS) drops the comparison of passes. With --out, writes rdma-core-tests.txt
(every test's result on both devices) and rdma-core-summary.txt (the
counts, and the skips of DEV grouped by reason) there. With --summary,
appends one line to make check's summary.
"""
import argparse
import collections
import os
import re
import sys

LINE = re.compile(r'RSIM-RDMACORE (\S+) (ok|skip|fail|error|notrun) (\S+) ?(.*)$')
TOTAL = re.compile(r'RSIM-RDMACORE (\S+) total (\d+) ok (\d+) skip (\d+) '
                   r'fail (\d+) error (\d+) notrun (\d+)')
STATUSES = ('ok', 'skip', 'fail', 'error', 'notrun')


def parse(paths):
    results = collections.defaultdict(dict)
    totals = {}
    for path in paths:
        with open(path, errors='replace') as f:
            lines = f.read().splitlines()
        for line in lines:
            m = TOTAL.search(line)
            if m:
                totals[m.group(1)] = dict(zip(('total',) + STATUSES,
                                              map(int, m.groups()[1:])))
                continue
            m = LINE.search(line)
            if m:
                dev, status, test, reason = m.groups()
                results[dev][test] = (status, reason.strip())
    return results, totals


def counts(res):
    c = collections.Counter(s for s, _ in res.values())
    return {s: c.get(s, 0) for s in STATUSES}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('logs', nargs='+')
    ap.add_argument('--dev', default='rdmasim0')
    ap.add_argument('--peer', default='rxe0')
    ap.add_argument('--out')
    ap.add_argument('--some', action='store_true')
    ap.add_argument('--summary')
    a = ap.parse_args()

    results, totals = parse(a.logs)
    problems = []
    summary = []
    for dev in (a.dev, a.peer):
        if dev not in totals:
            problems.append(f'{dev}: the run did not finish (no total line)')
            continue
        c = counts(results[dev])
        if sum(c.values()) != totals[dev]['total']:
            problems.append(f'{dev}: {sum(c.values())} result lines, '
                            f'total says {totals[dev]["total"]}')
        summary.append(f'{dev}: {totals[dev]["total"]} tests: '
                       f'{c["ok"]} passed, {c["skip"]} skipped, '
                       f'{c["fail"]} failed, {c["error"]} errors, '
                       f'{c["notrun"]} vendor tests not run')
    mine = results.get(a.dev, {})
    peer = results.get(a.peer, {})
    for test, (status, reason) in sorted(mine.items()):
        if status in ('fail', 'error'):
            problems.append(f'{a.dev}: {status} {test}: {reason}')
        if status == 'skip' and not reason:
            problems.append(f'{a.dev}: skip {test} gives no reason')
    mc, pc = counts(mine), counts(peer)
    if not a.some and mine and peer and mc['ok'] <= pc['ok']:
        problems.append(f'{a.dev} passes {mc["ok"]}, not more than '
                        f'{a.peer}\'s {pc["ok"]}')
    better = sorted(t for t, (s, _) in mine.items()
                    if s == 'ok' and peer.get(t, ('',))[0] != 'ok')
    worse = sorted(t for t, (s, _) in peer.items()
                   if s == 'ok' and mine.get(t, ('',))[0] != 'ok')
    summary.append(f'passed on {a.dev} only: {len(better)}; '
                   f'on {a.peer} only: {len(worse)}')

    if a.out:
        os.makedirs(a.out, exist_ok=True)
        with open(os.path.join(a.out, 'rdma-core-tests.txt'), 'w') as f:
            f.write(f'{"test":<90} {a.dev:<8} {a.peer:<8}\n')
            for test in sorted(set(mine) | set(peer)):
                f.write(f'{test:<90} {mine.get(test, ("-",))[0]:<8} '
                        f'{peer.get(test, ("-",))[0]:<8}\n')
        with open(os.path.join(a.out, 'rdma-core-summary.txt'), 'w') as f:
            f.write('\n'.join(summary) + '\n\n')
            f.write(f'{a.dev} skips by reason:\n')
            why = collections.Counter(r for s, r in mine.values()
                                      if s == 'skip')
            for reason, n in why.most_common():
                f.write(f'{n:5} {reason}\n')
            f.write(f'\npassed on {a.peer}, not on {a.dev}:\n')
            for t in worse:
                f.write(f'  {t}: {mine.get(t, ("-", ""))[0]} '
                        f'{mine.get(t, ("-", ""))[1]}\n')
    if a.summary:
        short = '; '.join(f'{dev} {counts(results.get(dev, {}))["ok"]} passed'
                          for dev in (a.dev, a.peer))
        with open(a.summary, 'a') as f:
            f.write(f'rdma-core tests\t{"FAIL" if problems else "PASS"}\t'
                    f'{short}, {mc["fail"] + mc["error"]} failed on {a.dev}\t\n')
    for s in summary:
        print(s)
    for p in problems:
        print('FAIL:', p)
    return 1 if problems else 0


if __name__ == '__main__':
    sys.exit(main())
