#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Judge rdma-core's own tests on rdmasim's devices against rxe0.

usage: judge-rdma-core.py LOG... --dev DEV [--dev DEV...] --peer DEV
                          [--out DIR] [--some] [--summary FILE]

Each LOG is the console of a UML boot that ran scripts/guest/rdma-core-tests.sh
(rdmasim0's in a debug boot, rxe0's in a boot of the non-debug kernel or
the cached log of an earlier one):
one "RSIM-RDMACORE <dev> <ok|skip|fail|error> <test id> [reason]" line per
test and a "RSIM-RDMACORE <dev> total ..." line per device
(scripts/guest/rdma-core-tests.py). Each DEV (rdmasim0, and rdmasim_rc0,
RoCE mode) must have run every test to the end, with no failure or error
and a reason on every skip or test not run (unittest's skip message, which
names what the device lacks); the DEVs together (a test counted once,
passed if it passed on one of them) must pass more than PEER (rxe0) in
the other log; --some (a run of some tests only, picked with
RSIM_RDMA_CORE_TESTS) drops the comparison of passes. With --out, writes rdma-core-tests.txt
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


RANK = {'ok': 4, 'skip': 3, 'notrun': 2, 'fail': 1, 'error': 0}


def union(results, devs):
    """{test: (status, reason)}: a test's best result on any of DEVS (a
    pass on one device is a pass), each test counted once"""
    out = {}
    for dev in devs:
        for test, r in results.get(dev, {}).items():
            if test not in out or RANK[r[0]] > RANK[out[test][0]]:
                out[test] = r
    return out


def per_file(mine, peer):
    """{test file: (passes of mine, passes of peer)} for each file of
    tests (tests.test_odp, ...) where peer passes any"""
    out = {}
    for res, i in ((mine, 0), (peer, 1)):
        for test, (status, _) in res.items():
            tf = '.'.join(test.split('.')[:2])
            if status == 'ok':
                out.setdefault(tf, [0, 0])[i] += 1
    return {tf: tuple(v) for tf, v in out.items() if v[1]}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('logs', nargs='+')
    ap.add_argument('--dev', action='append')
    ap.add_argument('--peer', default='rxe0')
    ap.add_argument('--out')
    ap.add_argument('--some', action='store_true')
    ap.add_argument('--summary')
    # issue 42's floor: the devices' union passes at least this many
    ap.add_argument('--min-pass', type=int, default=0)
    a = ap.parse_args()
    devs = a.dev or ['rdmasim0']
    name = '+'.join(devs)

    results, totals = parse(a.logs)
    problems = []
    summary = []
    for dev in devs + [a.peer]:
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
                       f'{c["notrun"]} not run')
    for dev in devs:
        for test, (status, reason) in sorted(results.get(dev, {}).items()):
            if status in ('fail', 'error'):
                problems.append(f'{dev}: {status} {test}: {reason}')
            if status in ('skip', 'notrun') and not reason:
                problems.append(f'{dev}: {status} {test} gives no reason')
    mine = union(results, devs)
    peer = results.get(a.peer, {})
    mc, pc = counts(mine), counts(peer)
    if len(devs) > 1:
        summary.append(f'{name} (each test once): {mc["ok"]} passed, '
                       f'{mc["skip"]} skipped, {mc["notrun"]} not run')
    if not a.some and mine and peer and mc['ok'] <= pc['ok']:
        problems.append(f'{name} passes {mc["ok"]}, not more than '
                        f'{a.peer}\'s {pc["ok"]}')
    if not a.some and mine and mc['ok'] < a.min_pass:
        problems.append(f'{name} passes {mc["ok"]}, fewer than '
                        f'{a.min_pass}')
    # no test file where the peer passes more (every file it runs: where
    # both pass all, equal is what "not fewer" can be)
    if not a.some and mine and peer:
        for tf, (m, p) in sorted(per_file(mine, peer).items()):
            if m < p:
                problems.append(f'{tf}: {name} passes {m}, fewer than '
                                f'{a.peer}\'s {p}')
    better = sorted(t for t, (s, _) in mine.items()
                    if s == 'ok' and peer.get(t, ('',))[0] != 'ok')
    worse = sorted(t for t, (s, _) in peer.items()
                   if s == 'ok' and mine.get(t, ('',))[0] != 'ok')
    summary.append(f'passed on {name} only: {len(better)}; '
                   f'on {a.peer} only: {len(worse)}')

    if a.out:
        os.makedirs(a.out, exist_ok=True)
        cols = devs + [a.peer]
        with open(os.path.join(a.out, 'rdma-core-tests.txt'), 'w') as f:
            f.write(f'{"test":<90} ' + ' '.join(f'{d:<12}' for d in cols)
                    + '\n')
            for test in sorted(set(mine) | set(peer)):
                f.write(f'{test:<90} ' + ' '.join(
                    f'{results.get(d, {}).get(test, ("-",))[0]:<12}'
                    for d in cols) + '\n')
        with open(os.path.join(a.out, 'rdma-core-summary.txt'), 'w') as f:
            f.write('\n'.join(summary) + '\n\n')
            f.write(f'{name} skips and tests not run, by reason (each '
                    'test once):\n')
            why = collections.Counter(r for s, r in mine.values()
                                      if s in ('skip', 'notrun'))
            for reason, n in why.most_common():
                f.write(f'{n:5} {reason}\n')
            f.write(f'\npassed on {a.peer}, not on {name}:\n')
            for t in worse:
                f.write(f'  {t}: {mine.get(t, ("-", ""))[0]} '
                        f'{mine.get(t, ("-", ""))[1]}\n')
            f.write(f'\npasses per test file where {a.peer} passes any '
                    f'({name} / {a.peer}; "<": fewer):\n')
            for tf, (m, p) in sorted(per_file(mine, peer).items()):
                f.write(f'  {tf:<40} {m:4} / {p:<4}'
                        f'{"  <" if m < p else ""}\n')
    if a.summary:
        short = '; '.join(f'{dev} {counts(results.get(dev, {}))["ok"]} passed'
                          for dev in devs)
        if len(devs) > 1:
            short += f' ({mc["ok"]} tests)'
        short += f'; {a.peer} {pc["ok"]} passed'
        bad = sum(counts(results.get(d, {}))['fail'] +
                  counts(results.get(d, {}))['error'] for d in devs)
        with open(a.summary, 'a') as f:
            f.write(f'rdma-core tests\t{"FAIL" if problems else "PASS"}\t'
                    f'{short}, {bad} failed on {name}\t\n')
    for s in summary:
        print(s)
    for p in problems:
        print('FAIL:', p)
    return 1 if problems else 0


if __name__ == '__main__':
    sys.exit(main())
