#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""peers-table.py --out DIR [--txt F] [--json F] [--svg F] DEV...

The table of make peers (scripts/peers.sh): every test of the outside
suites x device (rdmasim, siw, rxe) -> pass / fail (the suite's reason) /
not run (its skip reason), with seconds; each suite's wall time; every
kernel report, with the test that was running when it was printed; the
boot's own kmemleak objects (cleared before the suites, not charged).

It reads the suites' own output, per device in DIR/<dev>/:
  blktests   its result files (blktests/<results dir>/<group>/<test>,
             "key<TAB>value" lines, the files ./check writes and reads
             back) and, for a skip's reasons, which ./check only prints,
             ./check's output (blktests/check.log, or the console)
  kselftest  run_kselftest.sh's TAP (kselftest/<test>.tap), its
             subtests' lines included, the seconds guest/peers.sh
             noted (kselftest/seconds), and the tests it did not run
             with their reasons (scripts/peers/kselftest-rdma.notrun)
  rdma-core  the runner's RSIM-RDMACORE lines on the console
             (guest/rdma-core-tests.py; a test's seconds: the time
             since the line before)
  perftest   each program's exit status and times (perftest/results)
             and output (perftest/<program>.out)
and the kernel's messages on the console (DIR/<dev>/console.log), where
blktests' "run blktests <test> at <date>" marker, guest/peers.sh's
"RSIM-PEER kselftest|perftest <test>" and rdma-core's result lines tell
which test was running.

Exits 1 when rdmasim falls short of the acceptance: a test that passes on
siw or rxe but not on rdmasim, or a kernel report charged to rdmasim.
"""

import argparse
import glob
import html
import importlib.util
import json
import os
import re
import sys

# judge-log.py's report patterns and spans: one definition of a report
_spec = importlib.util.spec_from_file_location(
    'judge_log', os.path.join(os.path.dirname(os.path.abspath(__file__)), 'judge-log.py'))
jlp = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(jlp)
# judge-rdma-core.py's line of rdma-core-tests.py: one definition of it
_spec = importlib.util.spec_from_file_location(
    'judge_rdma_core',
    os.path.join(os.path.dirname(os.path.abspath(__file__)), 'judge-rdma-core.py'))
jrc = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(jrc)


def kind_of(block):
    """the kind of the first of judge-log.py's reports a block shows"""
    for text in block:
        for pat, kind in jlp.BAD:
            if re.search(pat, text):
                return kind
    return None

MARKER = re.compile(r'run blktests (\S+) at ')
RUN_AT = re.compile(r'run blktests (\S+) at (\d{4}-\d\d-\d\d \d\d:\d\d:\d\d)')
# ./check's status line: "nvme/010 (bd=device) (description)   [passed]"
STATUS = re.compile(r'^(\w+/\d+) (?:\((\w+=[^)]*)\) )?.*\[(passed|failed|not run)\]\s*$')
ANSI = re.compile(r'\x1b\[[0-9;]*[A-Za-z]')
PEER = re.compile(r'RSIM-PEER (begin|end) (\S+) dev=(\S+)(?: wall=(\d+))?'
                  r'(?: busy=(\d+) idle=(\d+))?')
BOOTLEAK = re.compile(r'RSIM-PEER kmemleak-before-suites objects=(\d+)')
TS = re.compile(r'^\[\s*\d+\.\d+\]\s?')
TSV = re.compile(r'^\[\s*(\d+\.\d+)\]')
# guest/peers.sh's marker of a kselftest test or a perftest program
TESTMARK = re.compile(r'RSIM-PEER (kselftest|perftest) (\S+)\s*$')
# guest/rdma-core-tests.py's lines
RC_BEGIN = re.compile(r'RSIM-RDMACORE-BEGIN (\S+)')
RC_LINE = jrc.LINE
RC_STDERR = re.compile(r'RSIM-RDMACORE-STDERR \S+: (.*)$')
# the row of rdma-core's run itself: failed until its total line (a runner
# that died, on a provider's assertion, leaves the rest without a line)
RC_RUN = ('rdma-core', '(the run to its end)', '')
RC_NO_TOTAL = 'no total line: the runner stopped'
# run_kselftest.sh's result of a test, and a test's own KTAP lines, which
# it prints prefixed with "# "
KS_TOP = re.compile(r'^(ok|not ok) \d+ selftests: \S+: (\S+)(?: # (SKIP|TIMEOUT|exit=\d+)\b ?(.*?))?\s*$')
KS_SUB = re.compile(r'^# (ok|not ok) (\d+) (.*?)(?: # (SKIP)\b ?(.*?))?\s*$')
KS_QUIET = re.compile(r'^# (TAP version|KTAP version|1\.\.|selftests:|overriding timeout|timeout set|Totals:)')
SUITES = ('blktests', 'kselftest', 'rdma-core', 'perftest')


def cond_of(resdir):
    """nodev_tr_rdma_bd_device -> "bd=device" (./check's COND_DESC, spaces
    and '=' made '_', less the transport: rdma on every device but loop,
    whose column is the loop transport's, so that its rows are the
    others'); nodev -> ''"""
    words = resdir.split('_')[1:]
    return ' '.join(f'{k}={v}' for k, v in zip(words[::2], words[1::2]) if k != 'tr')


def seconds(runtime):
    """blktests' runtime: bash's "time" output (real 0m1.234s) or N.NNNs"""
    m = re.search(r'real\s+(\d+)m([\d.]+)s', runtime)
    if m:
        return int(m.group(1)) * 60 + float(m.group(2))
    m = re.search(r'([\d.]+)s', runtime)
    return float(m.group(1)) if m else None


def read_result(path):
    """one blktests result file: key<TAB>value lines; a value may go on
    over lines of its own (runtime: bash's time output)"""
    res, key = {}, None
    with open(path, errors='replace') as f:
        for line in f:
            line = line.rstrip('\n')
            if '\t' in line and line.split('\t', 1)[0] in (
                    'description', 'date', 'status', 'reason', 'exit_status',
                    'runtime'):
                key, value = line.split('\t', 1)
                res[key] = value
            elif key:
                res[key] += '\n' + line
    return res


def read_flakes(path):
    """scripts/peers/known-flakes: [(name, test, output regex, console
    regex)]"""
    flakes = []
    for line in read_lines(path):
        if line.strip() and not line.startswith('#'):
            name, test, out, console = (w.strip() for w in line.split('|', 3))
            flakes.append((name, test, re.compile(out), re.compile(console)))
    return flakes


FLAKES = []


def test_console(lines):
    """{(test, date): its lines} of the console (timestamps off): from
    blktests' "run blktests <test> at <date>" to the next such marker"""
    out, cur = {}, None
    for text in lines:
        m = RUN_AT.search(text)
        if m:
            cur = out.setdefault((m.group(1), m.group(2)), [])
        elif cur is not None:
            cur.append(text)
    return out


def known_flake(test, path, r, sections):
    """the known flake (scripts/peers/known-flakes) a failed blktests
    test is, where its output and its lines on the console both show it;
    None otherwise"""
    for name, ftest, out, console in FLAKES:
        if ftest != test:
            continue
        bad = read_lines(path + '.out.bad')
        mine = sections.get((test, r.get('date', '')), [])
        if any(out.search(t) for t in bad) and any(console.search(t) for t in mine):
            return name
    return None


def blktests_results(devdir, sub='blktests', sections=None):
    """{('blktests', test, cond): {status, reason, seconds, kmemleak}} of
    the results in devdir/<sub> (blktests.round<N>: a later round);
    sections: the console's lines of each test run (test_console())"""
    out = {}
    base = os.path.join(devdir, sub)
    for path in glob.glob(os.path.join(base, 'nodev*', '*', '[0-9]*')):
        name = os.path.basename(path)
        if not re.fullmatch(r'\d+', name):
            continue
        resdir = os.path.relpath(path, base).split(os.sep)[0]
        group = os.path.basename(os.path.dirname(path))
        r = read_result(path)
        key = ('blktests', f'{group}/{name}', cond_of(resdir))
        out[key] = {
            'status': {'pass': 'pass', 'fail': 'fail'}.get(r.get('status', ''),
                                                          r.get('status', '?')),
            'reason': r.get('reason', ''),
            'seconds': seconds(r.get('runtime', '')),
            'kmemleak': os.path.exists(path + '.kmemleak'),
        }
        known = known_leak(path + '.kmemleak') if r.get('reason') == 'kmemleak' else None
        if known:
            out[key]['known'] = known
            out[key]['reason'] = f'kmemleak: {known} (Documentation/ulps.rst, Findings)'
        flake = (known_flake(f'{group}/{name}', path, r, sections or {})
                 if out[key]['status'] == 'fail' and not known else None)
        if flake:
            out[key]['known'] = flake
            out[key]['reason'] = (f"{r.get('reason', '')}: known flake {flake} "
                                  '(Documentation/ulps.rst, Findings)')
    return out


def known_leak(path):
    """the finding a test's kmemleak failure is, where every object its
    .kmemleak file lists is that known finding's (known-reports.findings);
    None otherwise"""
    lines = read_lines(path)
    names = {known_report(lines[first:last + 1])
             for first, last in jlp.report_spans(lines)}
    return names.pop() if len(names) == 1 and None not in names else None


def blktests_rounds(devdir, lines):
    """[(round, results)] of every round guest/peers.sh ran (the first in
    blktests/, the later ones in blktests.round<N>/); lines: the console,
    timestamps off"""
    sections = test_console(lines)
    rounds = [(1, blktests_results(devdir, sections=sections))]
    for path in glob.glob(os.path.join(devdir, 'blktests.round*')):
        m = re.search(r'round(\d+)$', path)
        if m:
            rounds.append((int(m.group(1)),
                           blktests_results(devdir, os.path.basename(path),
                                            sections)))
    return sorted(rounds, key=lambda r: r[0])


def repeatability(dev, rounds, walls):
    """the lines of the repeatability section for one device's rounds:
    each round's counts and wall time, and each test whose status was
    not the same in every round (blktests' flaky tests, or rdmasim's)"""
    lines = []
    for n, res in rounds:
        c = {st: sum(r['status'] == st for r in res.values())
             for st in ('pass', 'fail', 'not run')}
        wall = walls.get('blktests' if n == 1 else f'blktests.round{n}', '?')
        lines.append(f"  {dev} round {n}: {c['pass']} pass / {c['fail']} fail / "
                     f"{c['not run']} not run, {wall} s")
    keys = sorted({k for _, res in rounds for k in res})
    differ, known = [], []
    for k in keys:
        seen = [res.get(k, {}).get('status', 'absent') for _, res in rounds]
        if len(set(seen)) > 1:
            # a round that failed on a known finding's kmemleak object
            # (another component's race) is not the device's difference
            why = {res[k]['known'] for _, res in rounds if res.get(k, {}).get('known')}
            (known if why else differ).append(
                f"    {name_of(k)}: {' '.join(seen)}" +
                (f" ({', '.join(sorted(why))}: a finding, not the device's)" if why else ''))
    lines.append(f'  {dev}: the same results in all {len(rounds)} rounds' if not differ
                 else f'  {dev}: results that differ between rounds:')
    if known:
        lines.append(f'  {dev}: differences from known findings only:' if not differ
                     else f'  {dev}: and differences from known findings:')
    return lines + differ + known, bool(differ)


def skip_reasons(lines):
    """{(test, cond): reasons} of ./check's "not run" lines: the indented
    lines under each"""
    skips = {}
    for i, text in enumerate(lines):
        m = STATUS.match(text)
        if m and m.group(3) == 'not run':
            reasons = []
            for more in lines[i + 1:]:
                if not more.startswith('    '):
                    break
                reasons.append(more.strip())
            cond = ' '.join(w for w in (m.group(2) or '').split() if not w.startswith('tr='))
            skips[('blktests', m.group(1), cond)] = '; '.join(reasons)
    return skips


def read_lines(path):
    """a log's lines less terminal escapes (kernel timestamps kept); []
    when it is not there"""
    try:
        with open(path, errors='replace') as f:
            return [ANSI.sub('', line.rstrip('\n')) for line in f]
    except OSError:
        return []


def plain(lines):
    """lines less their kernel timestamps"""
    return [TS.sub('', line) for line in lines]


def read_notrun(path):
    """scripts/peers/kselftest-rdma.notrun: {test: reason}"""
    out = {}
    for line in read_lines(path):
        if line.strip() and not line.startswith('#') and '\t' in line:
            test, reason = line.split('\t', 1)
            out[test] = reason.strip()
    return out


def kselftest_results(devdir, notrun):
    """{('kselftest', test, ''): result} for each test of kselftest-list.txt,
    and one more row per subtest of its KTAP ("<test>: <description>")"""
    out = {}
    d = os.path.join(devdir, 'kselftest')
    times, forks = {}, {}
    for line in read_lines(os.path.join(d, 'seconds')):
        w = line.split()
        if len(w) in (3, 5):
            times[w[0]] = float(w[2]) - float(w[1])
        if len(w) == 5:
            forks[w[0]] = int(w[4]) - int(w[3])
    for test in read_lines(os.path.join(d, 'kselftest-list.txt')):
        test = test.strip()
        if not test:
            continue
        if test in notrun:
            out[('kselftest', test, '')] = {'status': 'not run', 'reason': notrun[test],
                                            'seconds': None}
            continue
        tap = read_lines(os.path.join(d, test.split(':', 1)[-1] + '.tap'))
        top = {'status': 'fail', 'reason': 'no result from run_kselftest.sh',
               'seconds': times.get(test)}
        subs, diag, failed = [], [], 0
        for line in tap:
            m = KS_SUB.match(line)
            if m:
                ok, _, desc, skip, why = m.groups()
                if skip:
                    r = {'status': 'not run',
                         'reason': why or notrun.get(f'{test}: {desc}',
                                                     'skipped by the test, no reason printed')}
                elif ok == 'ok':
                    r = {'status': 'pass', 'reason': ''}
                else:
                    failed += 1
                    r = {'status': 'fail', 'reason': diag[0] if diag else 'not ok'}
                r['seconds'] = None
                subs.append((f'{test}: {desc}', r))
                diag = []
                continue
            m = KS_TOP.match(line)
            if m:
                ok, _, what, why = m.groups()
                if what == 'SKIP':
                    top.update(status='not run', reason=why or (diag[-1] if diag else 'skipped'))
                elif ok == 'ok':
                    top.update(status='pass', reason='')
                elif what == 'TIMEOUT':
                    top.update(reason=f'timed out ({why})')
                elif failed:
                    top.update(reason=f'{failed} of {len(subs)} subtests failed')
                else:
                    top.update(reason=diag[0] if diag else what or 'not ok')
                continue
            if line.startswith('# ') and not KS_QUIET.match(line):
                diag.append(line[2:].strip())
        if test in forks:
            top['processes'] = forks[test]
        out[('kselftest', test, '')] = top
        for name, r in subs:
            out[('kselftest', name, '')] = r
    return out


def perftest_results(devdir):
    """{('perftest', program, ''): result} from perftest/results: the
    program, its exit status, /proc/uptime before and after"""
    out = {}
    d = os.path.join(devdir, 'perftest')
    for line in read_lines(os.path.join(d, 'results')):
        w = line.split()
        if len(w) != 4:
            continue
        prog, rc = w[0], int(w[1])
        r = {'status': 'pass' if rc == 0 else 'fail', 'reason': '',
             'seconds': float(w[3]) - float(w[2])}
        if rc:
            # what the client said, where it said why (a time-out of the
            # pair is often a client that gave up while its server waits)
            said = [x.strip() for x in read_lines(os.path.join(d, prog + '.out'))
                    if re.search(r'(?i)error|fail|unable|couldn', x)]
            r['reason'] = said[0][:100] if said else f'exit status {rc}'
            if rc == 124:
                r['reason'] = 'timed out (120 s)' + (f': {said[0][:100]}' if said else '')
        out[('perftest', prog, '')] = r
    return out


def read_console(raw, lines):
    """the suites' wall times; kernel reports with their tests; the boot's
    kmemleak count; rdma-core's results (its lines are on the console
    only); the seconds the CPU was busy and idle in each suite (where the
    guest said). raw: the console's lines, lines: the same less
    timestamps"""
    walls, reports, rcres, cpu = {}, [], {}, {}
    bootleak = None
    current = None      # the test running, where a marker named it
    pending = []        # reports whose test a later line names
    last_done = None
    rc_prev = None      # the time of rdma-core's last line
    starts = dict(jlp.report_spans(lines))

    def name_pending(name):
        nonlocal pending
        for rep in pending:
            rep['test'] = name
        pending = []

    for i, text in enumerate(lines):
        m = TSV.match(raw[i])
        ts = float(m.group(1)) if m else None
        m = MARKER.search(text)
        if m:
            current, pending = m.group(1), []
        m = STATUS.match(text)
        if m:
            name = f'{m.group(1)} ({m.group(2)})' if m.group(2) else m.group(1)
            name_pending(name)
            current, last_done = None, name
        m = TESTMARK.search(text)
        if m:
            pending = []
            current = f'{m.group(1)} {m.group(2)}'
        m = RC_BEGIN.search(text)
        if m:
            current, pending, rc_prev = 'rdma-core', [], ts
            rcres[RC_RUN] = {'status': 'fail', 'reason': RC_NO_TOTAL, 'seconds': None}
        if RC_RUN in rcres and jrc.TOTAL.search(text):
            rcres[RC_RUN].update(status='pass', reason='')
        m = RC_STDERR.search(text)
        if m and rcres.get(RC_RUN, {}).get('reason') == RC_NO_TOTAL:
            rcres[RC_RUN]['reason'] = f'the runner stopped: {m.group(1)[:160]}'
        m = RC_LINE.search(text)
        if m:
            _, status, test, reason = m.groups()
            name_pending(f'rdma-core {test}')
            last_done = f'rdma-core {test}'
            rcres[('rdma-core', test, '')] = {
                'status': {'ok': 'pass', 'fail': 'fail', 'error': 'fail'}.get(status, 'not run'),
                'reason': reason.strip() if status != 'ok' else '',
                'seconds': ts - rc_prev if ts is not None and rc_prev is not None else None,
            }
            rc_prev = ts
        m = PEER.search(text)
        if m and m.group(1) == 'end':
            walls[m.group(2)] = int(m.group(4))
            if m.group(5) is not None:
                cpu[m.group(2)] = (int(m.group(5)), int(m.group(6)))
            name_pending(f'{m.group(2)}, after its last test')
            current, last_done = None, f'the {m.group(2)} suite'
        m = BOOTLEAK.search(text)
        if m:
            bootleak = int(m.group(1))
        if i in starts:
            block = lines[i:starts[i] + 1]
            kind = kind_of(block)
            if kind:
                rep = {'kind': kind, 'title': title_of(block), 'line': i + 1,
                       'count': 1}
                rep['known'] = known_report(block)
                if current:
                    rep['test'] = current
                    pending.append(rep)
                elif last_done:
                    rep['test'] = f'after {last_done}'
                else:
                    rep['test'] = 'outside the suites'
                reports.append(rep)
    return walls, reports, bootleak, rcres, cpu


def title_of(block):
    """a report's first telling line (a WARN's is the one after "cut
    here"), less what differs between two reports of one bug: addresses,
    the task's name and PID"""
    for text in block:
        t = text.strip()
        if t and 'cut here' not in t:
            t = re.sub(r'\[addr=[0-9a-fx]+\]', '[addr=...]', t)
            t = re.sub(r', CPU#\d+: \S+$', '', t)
            return t[:160]
    return block[0].strip()[:160]


KNOWN = []


def known_report(block):
    """the name of the finding a report is (scripts/peers/
    known-reports.findings, judge-log.py's --findings format); None
    otherwise"""
    return jlp.finding_of(block, KNOWN)


def merge_reports(reports):
    """one line per (device, test, kind, title), counted"""
    merged = {}
    for rep in reports:
        key = (rep['dev'], rep['test'], rep['kind'], rep['title'])
        if key in merged:
            merged[key]['count'] += 1
        else:
            merged[key] = dict(rep)
    return list(merged.values())


def cell(r, reason=True):
    if r is None:
        return '-'
    s = r['status']
    t = f" {r['seconds']:.0f}s" if r.get('seconds') is not None else ''
    if s == 'pass':
        return 'pass' + t
    if s == 'fail':
        return (f"FAIL({r['reason'][:40]})" if reason and r['reason'] else 'FAIL') + t
    return 'not run'


def name_of(key):
    _, test, cond = key
    return f'{test} ({cond})' if cond else test


def order(keys):
    """the suites in SUITES' order; blktests' tests by group and number,
    the others as they ran (first seen)"""
    def blk(k):
        g, n = k[1].split('/')
        return (g, int(n), k[2])
    out = []
    for suite in SUITES:
        ks = [k for k in keys if k[0] == suite]
        out += sorted(ks, key=blk) if suite == 'blktests' else ks
    return out


# (suite, note): each printed where its suite ran
NOTES = [
    ('blktests', 'the nvmet/rdma_cm lockdep report (Documentation/ulps.rst, Findings) does not fire: '
    "the test kernel gives listening IDs' handler_mutex a lockdep class of their own "
    '(kunit/patches/7.3/)'),
    ('blktests', 'the test kernel saves stack traces by following the frame chain '
     '(kunit/patches/7.3/0002, Documentation/ulps.rst, Findings): KASAN, kmemleak and '
     "DMA-API debug's traces cost a test per frame, not per word of the stack; the data "
     'tests run about ten times faster, on every device'),
    ('kselftest', "run_kselftest.sh --override-timeout 600: kselftest's 45 s is too short "
     'for rxe_netns_names.sh on the debug UML kernel, on every device (230 to 310 s: '
     'about 500 short-lived ip and rdma processes, each about 0.5 s under UML; '
     'the profile per device is below)'),
    ('perftest', 'perftest 25.01 (the newest packaged) has no --data_validation: 1000 '
     'iterations on a device on a veth end; rdmasim and rxe through its own '
     'run_perftest_loopback, siw (iWARP) with -R --ipv6-addr (rdma_cm), its client '
     "connecting to the veth end's link-local address (the loopback script's "
     '"localhost" is no iWARP device\'s); a program passes when it exits 0'),
    ('perftest', 'the latency programs on the boot\'s one CPU: server and client '
     'busy-poll it, and rdmasim completes a small WR inside the post (no thread of its own '
     'to switch to), so each half round trip waits for the scheduler tick (HZ=100: t_typical '
     '10 ms, 1000 round trips about 20 s); rxe executes in a kernel work item whose wake-up '
     'hands the CPU over (about 58 us). On two CPUs (make bench) rdmasim\'s round trip is '
     'the shorter'),
    ('rdma-core', "rdma-core 65's tests, on a device of each type on a veth end (IPv6 link-local); "
    'vendor tests (mlx5, EFA) not run'),
]


def profile(suites, walls, cpus, peers):
    """the lines of "where the time goes": each suite's CPU seconds busy
    and idle per device, the busy ratios of rdmasim to the devices that
    compare with it (peers: {suite: devices}), and, where rdmasim's wall
    time is over half such a device's, how much of it the CPU spent idle
    (the suite's own waits, which no device shortens)"""
    lines = []
    for suite in suites:
        have = [d for d in cpus if suite in cpus[d]]
        if not have:
            continue
        if not lines:
            lines += ['', "where the time goes: the boot's CPU busy / idle "
                      'during each suite (s)']
        parts = [f'{d} {cpus[d][suite][0]}/{cpus[d][suite][1]}' for d in have]
        line = f'  {suite:<10} ' + ', '.join(parts)
        mine = cpus.get('rdmasim', {}).get(suite)
        if mine:
            ratios = [f'rdmasim/{d} {mine[0] / cpus[d][suite][0]:.2f}' for d in have
                      if d in peers[suite] and cpus[d][suite][0]]
            if ratios:
                line += ' (CPU busy ' + ', '.join(ratios) + ')'
        lines.append(line)
        w = walls.get('rdmasim', {}).get(suite)
        over = [d for d in have if d in peers[suite] and w
                and walls[d].get(suite) and w > walls[d][suite] / 2]
        if mine and over:
            lines.append(f'    over half of {", ".join(over)}\'s wall time: of '
                         f"rdmasim's {w} s, the CPU was idle {mine[1]} s "
                         '(the suite waiting: its sleeps, timers and time-outs) and busy '
                         f'{mine[0]} s')
    return lines


def floor(keys, results, devs):
    """the lines of "above the floor": over blktests' nvme tests that
    passed on loop (NVMe's loop transport, no RDMA device) and on every
    RDMA device, each device's seconds, and the seconds above loop's, the
    time the device and its transport added; rdmasim's share of the
    others'"""
    rdma = [d for d in devs if d != 'loop']
    if 'loop' not in devs or not rdma:
        return []
    common = [k for k in keys if k[0] == 'blktests'
              and all((results[d].get(k) or {}).get('status') == 'pass'
                      and (results[d].get(k) or {}).get('seconds') is not None
                      for d in devs)]
    if not common:
        return []
    total = {d: sum(results[d][k]['seconds'] for k in common) for d in devs}
    above = {d: total[d] - total['loop'] for d in rdma}
    lines = ['', f'above the floor: the {len(common)} blktests runs that passed '
             'over the loop transport (no RDMA) and on every device (s)',
             f"  loop {total['loop']:.0f}, " + ', '.join(
                 f'{d} {total[d]:.0f} (+{above[d]:.0f})' for d in rdma)]
    if 'rdmasim' in rdma:
        ratios = [f'rdmasim/{d} {above["rdmasim"] / above[d]:.2f}' for d in rdma
                  if d != 'rdmasim' and above[d] > 0]
        if ratios:
            lines.append('  the time RDMA added (nvme-rdma, nvmet-rdma and the device), '
                         "rdmasim's to the others': "
                         + ', '.join(ratios))
    return lines


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--out', required=True)
    ap.add_argument('--txt')
    ap.add_argument('--json')
    ap.add_argument('--svg')
    ap.add_argument('--require-pass', action='store_true',
                    help="make check's subset: every test must pass")
    ap.add_argument('devs', nargs='+')
    a = ap.parse_args()

    top = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    notrun = read_notrun(os.path.join(top, 'scripts', 'peers', 'kselftest-rdma.notrun'))
    KNOWN[:] = jlp.read_findings(os.path.join(top, 'scripts', 'peers',
                                              'known-reports.findings'))
    FLAKES[:] = read_flakes(os.path.join(top, 'scripts', 'peers', 'known-flakes'))
    results, walls, reports, bootleaks, cpus = {}, {}, [], {}, {}
    rounds = {}
    seen = []
    for dev in a.devs:
        d = os.path.join(a.out, dev)
        console = read_lines(os.path.join(d, 'console.log'))
        lines = plain(console)
        rounds[dev] = blktests_rounds(d, lines)
        res = rounds[dev][0][1]
        w, reps, bl, rcres, cpus[dev] = read_console(console, lines)
        # ./check's own output, where it was kept, over the console's copy
        skips = skip_reasons(lines)
        skips.update(skip_reasons(plain(read_lines(os.path.join(d, 'blktests', 'check.log')))))
        for key, r in res.items():
            if r['status'] == 'not run':
                r['reason'] = skips.get(key, '')
        res.update(kselftest_results(d, notrun))
        res.update(rcres)
        res.update(perftest_results(d))
        for k in res:
            if k not in seen:
                seen.append(k)
        results[dev] = res
        walls[dev] = w
        bootleaks[dev] = bl
        for rep in reps:
            rep['dev'] = dev
        reports += reps
    reports = merge_reports(reports)
    keys = order(seen)
    suites = [s for s in SUITES if any(k[0] == s for k in keys)]

    width = max([len(name_of(k)) for k in keys] + [10])
    lines = []
    head = f"{'test':<{width}}  " + '  '.join(f'{d:<18}' for d in a.devs)
    short = []
    notruns = {}
    for suite in suites:
        lines += ['', f'{suite}:', head, '-' * len(head)]
        for k in [k for k in keys if k[0] == suite]:
            name = name_of(k)
            row = [results[d].get(k) for d in a.devs]
            lines.append(f'{name:<{width}}  ' + '  '.join(f'{cell(r, False):<18}' for r in row))
            for d, r in zip(a.devs, row):
                if r and r['status'] == 'not run':
                    why = f"{suite}: {r['reason'] or 'no reason printed'}"
                    notruns.setdefault(why, {}).setdefault(d, []).append(k[1])
            others = [results[d].get(k) for d in a.devs if d not in ('rdmasim', 'loop')]
            mine = results.get('rdmasim', {}).get(k)
            if 'rdmasim' in a.devs and any(o and o['status'] == 'pass' for o in others) \
                    and not (mine and (mine['status'] == 'pass' or mine.get('known'))):
                short.append(f'{suite} {name}: passes on another device, {cell(mine)} on rdmasim')
    lines.append('')
    lines.append('per suite: tests passed / failed / not run; wall time (s)')
    counts = {(d, suite): [sum(r['status'] == st for k, r in results[d].items()
                               if k[0] == suite) for st in ('pass', 'fail', 'not run')]
              for d in a.devs for suite in suites}
    # the devices whose time compares with rdmasim's in a suite: those
    # that passed as many of its tests (a suite that stopped early, or
    # whose tests time out, is not faster or slower, it did not run)
    peers = {suite: [d for d in a.devs if d not in ('rdmasim', 'loop')
                     and 'rdmasim' in a.devs
                     and counts[(d, suite)][0] >= counts[('rdmasim', suite)][0]]
             for suite in suites}
    for suite in suites:
        parts = [f"{d} {'/'.join(map(str, counts[(d, suite)]))} "
                 f"{walls[d].get(suite, '?')} s" for d in a.devs
                 if any(counts[(d, suite)]) or suite in walls[d]]
        mine = walls.get('rdmasim', {}).get(suite)
        ratios = [f'rdmasim/{d} {mine / walls[d][suite]:.2f}' for d in peers[suite]
                  if mine and walls[d].get(suite)]
        fewer = [d for d in a.devs if d not in ('rdmasim', 'loop') and d not in peers[suite]]
        more = []
        if ratios:
            more.append('wall time ' + ', '.join(ratios))
        if fewer and 'rdmasim' in a.devs:
            more.append(f"{', '.join(fewer)} passed fewer: not compared")
        lines.append(f'  {suite:<10} ' + ', '.join(parts) +
                     (' (' + '; '.join(more) + ')' if more else ''))
    lines += profile(suites, walls, cpus, peers)
    lines += floor(keys, results, a.devs)
    flaky = []
    if any(len(r) > 1 for r in rounds.values()):
        lines.append('')
        lines.append('repeatability: blktests run again in the same boot')
        for d in a.devs:
            if len(rounds[d]) > 1:
                more, differs = repeatability(d, rounds[d], walls[d])
                lines += more
                if differs and d == 'rdmasim':
                    flaky.append('rdmasim: blktests results differ between rounds')
    lines.append('')
    lines.append('failed, with the reason:')
    nfail = 0
    for k in keys:
        for d in a.devs:
            r = results[d].get(k)
            if r and r['status'] == 'fail':
                nfail += 1
                lines.append(f'  {d:<8} {k[0]} {name_of(k)}: {r["reason"] or "no reason given"}')
    if not nfail:
        lines.append('  none')
    lines.append('')
    lines.append('not run, by reason:')
    for reason, per in sorted(notruns.items()):
        lines.append(f'  {reason}')
        for d in a.devs:
            if d in per:
                more = len(per[d]) - 6
                lines.append(f"    {d}: {' '.join(per[d][:6])}" +
                             (f' and {more} more' if more > 0 else ''))
    lines.append('')
    lines.append('kernel reports (device, test, kind, first line):')
    if not reports:
        lines.append('  none')
    for rep in reports:
        n = f" (x{rep['count']})" if rep['count'] > 1 else ''
        k = (f" [Documentation/ulps.rst, Findings: {rep['known']}; not charged]"
             if rep.get('known') else '')
        lines.append(f"  {rep['dev']:<8} {rep['test']:<24} {rep['kind']:<10} {rep['title']}{n}{k}")
    lines.append('')
    lines.append('notes:')
    for d in a.devs:
        bl = bootleaks.get(d)
        lines.append(f"  {d}: kmemleak objects of the boot, cleared before the suites: "
                     f"{'?' if bl is None else bl}")
    notes = [(suite, note) for suite, note in NOTES if suite in suites]
    if 'loop' in a.devs:
        notes.append(('blktests', "loop: the nvme tests over NVMe's loop transport "
                      '(NVMET_TRTYPES=loop), no RDMA device, the floor of "above the '
                      'floor"; it stays out of the acceptance and of the ratios'))
    # the profile of the kselftest scripts: their time per process started
    for k in keys:
        for d in a.devs:
            r = results[d].get(k)
            if r and r.get('processes') and r.get('seconds'):
                notes.append((k[0], f"{k[1]} on {d}: {r['seconds']:.0f} s, "
                              f"{r['processes']} processes started, "
                              f"{r['seconds'] / r['processes'] * 1000:.0f} ms per process"))
    for suite, note in notes:
        lines.append(f'  {suite}: {note}')
    charged = [r for r in reports if r['dev'] == 'rdmasim' and not r.get('known')]
    if a.require_pass:
        for d in a.devs:
            if not results[d]:
                short.append(f'{d}: no test ran')
            for k in keys:
                r = results[d].get(k)
                if r and r['status'] != 'pass':
                    short.append(f'{name_of(k)} on {d}: {cell(r, False)} {r["reason"]}'.rstrip())
    lines.append('')
    short += flaky
    lines.append('acceptance: ' + ('met' if not short and not charged else 'NOT met'))
    for s in short:
        lines.append(f'  {s}')
    for r in charged:
        lines.append(f"  kernel report on rdmasim in {r['test']}: {r['title']}")
    text = '\n'.join(lines[1:]) + '\n'
    if a.txt:
        with open(a.txt, 'w') as f:
            f.write(text)
    else:
        sys.stdout.write(text)
    if a.json:
        with open(a.json, 'w') as f:
            json.dump({
                'devices': a.devs,
                'wall_seconds': walls,
                'cpu_busy_idle_seconds': cpus,
                'boot_kmemleak_objects_cleared': bootleaks,
                'tests': [{'suite': k[0], 'test': k[1], 'cond': k[2],
                           'results': {d: results[d].get(k) for d in a.devs}}
                          for k in keys],
                'reports': reports,
                'notes': [f'{suite}: {note}' for suite, note in notes],
                'acceptance': {'short': short,
                               'reports_on_rdmasim': charged},
            }, f, indent=1)
    if a.svg:
        with open(a.svg, 'w') as f:
            f.write(svg(keys, suites, results, walls, a.devs))
    return 1 if short or charged else 0


def svg_rows(keys, results, devs):
    """the picture's rows: every test but rdma-core's, which get one row
    per test module (pass/fail/not run counts)"""
    rows = []
    mods = {}
    for k in keys:
        if k[0] != 'rdma-core':
            rows.append((name_of(k), {d: results[d].get(k) for d in devs}))
            continue
        mod = k[1].rsplit('.', 2)[0]
        if mod not in mods:
            mods[mod] = {d: [0, 0, 0] for d in devs}
            rows.append((mod, mods[mod]))
        for d in devs:
            r = results[d].get(k)
            if r:
                mods[mod][d][('pass', 'fail', 'not run').index(r['status'])] += 1
    return rows


def svg(keys, suites, results, walls, devs):
    """the table as a picture: a row per test (rdma-core's per module), a
    column per device, green pass, red fail, grey not run, the seconds in
    each cell; each suite's wall times as bars under it"""
    cw, rh, lw = 110, 16, 330
    colour = {'pass': '#5cb85c', 'fail': '#d9534f', 'not run': '#cccccc'}
    rows = svg_rows(keys, results, devs)
    h = 40 + rh * len(rows) + 30 + len(suites) * (22 * len(devs) + 20) + 20
    w = lw + cw * len(devs) + 20
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" '
           'font-family="monospace" font-size="11">',
           f'<rect width="{w}" height="{h}" fill="white"/>',
           '<text x="4" y="14" font-size="13">make peers: ' + ', '.join(suites) +
           ' on ' + ', '.join(devs) + ' (debug UML kernel)</text>']
    for j, d in enumerate(devs):
        out.append(f'<text x="{lw + j * cw + 4}" y="34">{d}</text>')
    for i, (name, per) in enumerate(rows):
        y = 40 + i * rh
        out.append(f'<text x="4" y="{y + 12}">{html.escape(name[:52])}</text>')
        for j, d in enumerate(devs):
            r = per[d]
            if isinstance(r, list):
                fill = '#d9534f' if r[1] else '#5cb85c' if r[0] else '#cccccc'
                label = f'{r[0]} ok {r[1]} F {r[2]} -'
            else:
                fill = colour.get(r['status'], '#ffffff') if r else '#ffffff'
                label = cell(r, False).replace('not run', 'skip')
            out.append(f'<rect x="{lw + j * cw}" y="{y}" width="{cw - 2}" '
                       f'height="{rh - 2}" fill="{fill}"/>')
            out.append(f'<text x="{lw + j * cw + 3}" y="{y + 11}">{label}</text>')
    y = 40 + rh * len(rows) + 24
    for suite in suites:
        out.append(f'<text x="4" y="{y}">{suite}: wall time</text>')
        most = max([walls[d].get(suite, 0) for d in devs] + [1])
        for j, d in enumerate(devs):
            s = walls[d].get(suite, 0)
            yy = y + 8 + j * 22
            out.append(f'<text x="4" y="{yy + 12}">{d}</text>')
            out.append(f'<rect x="{lw}" y="{yy}" '
                       f'width="{max(1, int(s / most * cw * len(devs)))}" '
                       f'height="16" fill="#428bca"/>')
            out.append(f'<text x="{lw + 4}" y="{yy + 12}" fill="white">{s} s</text>')
        y += 22 * len(devs) + 20
    out.append('</svg>\n')
    return '\n'.join(out)


if __name__ == '__main__':
    sys.exit(main())
