#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Judge one UML test run from its console log.

The run fails on: a KUnit suite that failed or is missing (the expected
suites are the ones kunit/*.c declare), a failed shell selftest line, and
any KASAN, kmemleak, lockdep, DMA-API debug, WARN or BUG report anywhere in
the log, even when every case passed.

The conformance suites (rdma_conformance.ko, between RSIM-CONF markers)
are judged by conformance-table.py, which prints the rule x device table
and writes it to the output directory.

usage: check-run.py <console log> <kernel source> <repo top> [--json out]
                    [--conformance dev,dev,... --out dir]
"""
import glob
import json
import os
import re
import subprocess
import sys

# Reports that fail a run wherever they appear.
BAD = [
    (r'BUG: ', 'BUG'),
    (r'WARNING: ', 'WARN or lockdep'),
    (r'-+\[ cut here \]-+', 'WARN'),
    (r'Call Trace:', 'stack dump'),
    (r'KASAN', 'KASAN'),
    (r'UBSAN', 'UBSAN'),
    (r'kmemleak: \d+ new suspected memory leaks', 'kmemleak'),
    (r'unreferenced object 0x', 'kmemleak'),
    (r'possible circular locking dependency', 'lockdep'),
    (r'possible recursive locking', 'lockdep'),
    (r'inconsistent lock state', 'lockdep'),
    (r'DEBUG_LOCKS_WARN_ON', 'lockdep'),
    (r'list_(add|del) corruption', 'DEBUG_LIST'),
    (r'Kernel panic', 'panic'),
    (r'Oops', 'oops'),
    (r'general protection fault', 'oops'),
]
# DMA-API debug prints two informational lines at boot; anything else
# from it is a report.
DMA_API_OK = re.compile(r'DMA-API: (preallocated \d+ debug entries|'
                        r'debugging enabled by kernel config)')


def expected_suites(top):
    names = []
    for path in sorted(glob.glob(os.path.join(top, 'kunit', '*.c'))):
        with open(path) as f:
            names += re.findall(r'\.name = "(rdmasim_\w+)",\s*\n\s*\.(?:suite_init|init|test_cases)', f.read())
    return names


def strip_ts(line):
    return re.sub(r'^\[\s*\d+\.\d+\]\s?', '', line)


def option(name):
    return sys.argv[sys.argv.index(name) + 1] if name in sys.argv else None


def main():
    log_path, ksrc, top = sys.argv[1:4]
    json_out = option('--json')
    conf_devs = option('--conformance')
    out_dir = option('--out')
    with open(log_path, errors='replace') as f:
        lines = f.read().splitlines()
    problems = []

    # 1. reports anywhere in the log
    for i, line in enumerate(lines):
        text = strip_ts(line)
        for pat, kind in BAD:
            if re.search(pat, text):
                problems.append(f'{kind} report at log line {i + 1}: {text.strip()}')
                break
        if 'DMA-API:' in text and not DMA_API_OK.search(text):
            problems.append(f'DMA-API report at log line {i + 1}: {text.strip()}')

    # 2. KTAP between the markers, through the kernel's own parser
    try:
        b = next(i for i, l in enumerate(lines) if 'RSIM-KTAP-BEGIN' in l)
        e = next(i for i, l in enumerate(lines) if 'RSIM-KTAP-END' in l)
    except StopIteration:
        problems.append('no KTAP section in the log')
        b = e = 0
    ktap = '\n'.join(lines[b + 1:e]) + '\n'
    suites = {}
    if e > b:
        kunit = os.path.join(ksrc, 'tools', 'testing', 'kunit', 'kunit.py')
        res = subprocess.run([sys.executable, kunit, 'parse', '--json'],
                             input=ktap, capture_output=True, text=True)
        try:
            doc = json.loads(res.stdout[res.stdout.index('{'):])
        except (ValueError, json.JSONDecodeError):
            problems.append('kunit.py parse gave no JSON:\n' + res.stdout[-2000:] + res.stderr[-2000:])
            doc = {'test_cases': []}
        def bad(group):
            m = group.get('misc', {})
            return m.get('failed', 0) + m.get('crashed', 0) + m.get('errors', 0)

        for suite in doc.get('sub_groups', []):
            failed = [c['name'] for c in suite.get('test_cases', [])
                      if c.get('status') not in ('PASS', 'SKIP')]
            failed += [g['name'] for g in suite.get('sub_groups', []) if bad(g)]
            ok = not bad(suite) and not failed and suite.get('misc', {}).get('tests', 0)
            suites[suite['name']] = ('PASS' if ok else 'FAIL', failed)
        sys.stdout.write(subprocess.run([sys.executable, kunit, 'parse', '--summary'],
                                        input=ktap, capture_output=True,
                                        text=True).stdout)
        if json_out:
            with open(json_out, 'w') as f:
                f.write(res.stdout)

    want = expected_suites(top)
    for name in want:
        if name not in suites:
            problems.append(f'suite {name} is missing from the run')
        elif suites[name][0] != 'PASS':
            problems.append(f'suite {name}: {suites[name][0]}, failed: {suites[name][1]}')

    # case counts, each parameter of a parameterised case counted, from
    # the raw KTAP: 8-space results are parameters of the next 4-space one
    counts = {}
    current = None
    params = 0
    for line in ktap.splitlines():
        t = strip_ts(line)
        m = re.match(r'\s*# Subtest: (rdmasim_\w+)', t)
        if m:
            current = m.group(1)
            counts[current] = 0
            params = 0
        elif current and re.match(r' {8}(not )?ok \d+ ', t):
            params += 1
        elif current and re.match(r' {4}(not )?ok \d+ ', t):
            counts[current] += params or 1
            params = 0
    print('suite                 cases (parameters counted)')
    for name in want:
        st = suites.get(name, ('MISSING', []))[0]
        print(f'  {name:20} {counts.get(name, 0):4}  {st}')

    # 3. the shell selftest
    st_lines = [strip_ts(l) for l in lines if 'RSIM-SELFTEST' in l]
    oks = [l for l in st_lines if re.search(r'RSIM-SELFTEST ok \d+', l)]
    bad = [l for l in st_lines if 'RSIM-SELFTEST not ok' in l]
    print(f'shell selftest: {len(oks)} ok, {len(bad)} not ok')
    for l in bad:
        problems.append('selftest: ' + l.split('RSIM-SELFTEST ', 1)[1])
    for l in st_lines:
        if 'RSIM-SELFTEST #' in l:
            print('  ' + l.split('RSIM-SELFTEST ', 1)[1])

    # 4. the conformance suites: the table, and its judgement
    if conf_devs:
        cmd = [sys.executable, os.path.join(top, 'scripts', 'conformance-table.py'),
               log_path, '--expect', conf_devs, '--judge',
               '--known', os.path.join(top, 'kunit', 'conformance', 'known-divergences'),
               '--doc', os.path.join(top, 'Documentation', 'conformance.rst')]
        if out_dir:
            cmd += ['--out', out_dir]
        print()
        res = subprocess.run(cmd, capture_output=True, text=True)
        sys.stdout.write(res.stdout + res.stderr)
        if res.returncode:
            problems.append('conformance: see "conformance FAILED" above')

    # 5. kmemleak's list, printed between markers
    try:
        kb = next(i for i, l in enumerate(lines) if 'RSIM-KMEMLEAK-BEGIN' in l)
        ke = next(i for i, l in enumerate(lines) if 'RSIM-KMEMLEAK-END' in l)
        leak = [l for l in lines[kb + 1:ke] if l.strip() and 'RSIM-' not in l]
        if leak:
            problems.append('kmemleak lists objects:\n  ' + '\n  '.join(leak[:40]))
    except StopIteration:
        problems.append('kmemleak was not read')

    if problems:
        print('\nFAILED:')
        for p in problems:
            print('  ' + p)
        return 1
    print('run clean: every suite passed, no reports in the log')
    return 0


if __name__ == '__main__':
    sys.exit(main())
