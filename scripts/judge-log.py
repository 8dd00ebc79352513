#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Judge UML test runs from their console logs.

usage: judge-log.py LOG... [--kunit KO [--glob GLOB] [--doc RST]]
                    [--selftest] [--conformance DEV,DEV,... [--top DIR]
                    [--conformance-module KO] [--known FILE]]
                    [--json FILE] [--out DIR] [--times]

Every log (one per UML boot of the run) must have finished (RSIM-DONE),
had kmemleak read, and hold no KASAN, kmemleak, lockdep, DMA-API debug,
WARN or BUG report anywhere, even when every case passed. The RSIM-* lines
the guest prints are described in Documentation/testing.rst ("The console
protocol"); KTAP is read by ktap.py, the one parser.

--kunit KO   the KUnit suites that must have run and passed are the ones
             the built module KO declares (read from its ELF by
             kosuites.py), those matching GLOB (kunit.filter_glob's suite
             part) when given; with --doc, the module must also declare
             exactly the suites the table of "KUnit suites" in RST
             documents, so that a suite deleted from the source (and so
             from the module) fails the run.
--part NAME  at least one log ran the part NAME of guest/init-uml.sh
             (RSIM-PART NAME): the fabric boot's, RSIM-PART fabric.
--selftest   at least one log ran the shell selftest (RSIM-PART selftest).
             In every log, every RSIM-SELFTEST line (the checks of the
             setup, the selftest and the teardown) must be ok, and there
             must be as many as its plan says.
--conformance DEVS  the conformance suites (between RSIM-CONF markers) on
             these devices, judged and tabulated by conformance-table.py
             (--out: where the table goes; --conformance-module KO: the
             suites each device must have are the ones the built
             rdma_conformance.ko runs by default; --known FILE: the known
             divergences of rxe and siw on the booted kernel, by default
             kunit/conformance/known-divergences, 7.3's).
--findings FILE  known reports of a ULP (Documentation/ulps.rst,
             "Findings"), one per line, "name | regex | regex ...": a
             report whose lines match every regex of one is accepted; each
             must show, so that a fix upstream is noticed.
--findings-may-show  with --findings: a finding need not show (make peers,
             whose run may be a subset of the suites: the known reports of
             scripts/peers/known-reports.findings).
--times      where the time went, per log: the RSIM-PART stages and each
             KUnit suite, from the printk timestamps.
--summary FILE --label NAME  append one line to make check's summary:
             NAME, PASS or FAIL, and what was counted (KUnit cases,
             selftest checks, conformance rules, reports).
"""
import argparse
import fnmatch
import json
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import kosuites  # noqa: E402
import ktap  # noqa: E402

# Reports that fail a run wherever they appear.
BAD = [
    (r'BUG: ', 'BUG'),
    # not blktests' own "WARNING: Test did not clean up ..." (its check
    # script's words about a failed test's leftovers in configfs)
    (r'WARNING: (?!Test did not clean up)', 'WARN or lockdep'),
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
    (r'blocked for more than \d+ seconds', 'hung task'),
    (r'rcu: INFO: .*detected stalls', 'RCU stall'),
    (r'Kernel panic', 'panic'),
    (r'Oops', 'oops'),
    (r'general protection fault', 'oops'),
]
# DMA-API debug prints two informational lines at boot; anything else
# from it is a report.
DMA_API_OK = re.compile(r'DMA-API: (preallocated \d+ debug entries|'
                        r'debugging enabled by kernel config)')
TSTAMP = re.compile(r'^\[\s*(\d+\.\d+)\]')


def documented_suites(rst):
    """the suite names in the first column of the "KUnit suites" table"""
    with open(rst) as f:
        text = f.read()
    m = re.search(r'^KUnit suites\n=+\n(.*?)(?=^\S[^\n]*\n=+\n)', text, re.M | re.S)
    if not m:
        raise ValueError(f'{rst}: no "KUnit suites" section')
    return re.findall(r'^   \* - ``(\w+)``', m.group(1), re.M)


# Where a report begins: what splits a log into reports for --findings.
# A WARN's first line is its "cut here"; the rest have their own banner.
REPORT_START = re.compile(r'-+\[ cut here \]-+|WARNING: possible |BUG: |BUG \S+ \(|'
                          r'KASAN|UBSAN|unreferenced object 0x|'
                          r'inconsistent lock state|Kernel panic|general protection')
REPORT_END = re.compile(r'---\[ end trace |RSIM-')
# after a WARN's end of trace, DMA-API debug prints where the memory was
# mapped: part of the same report
REPORT_MORE = re.compile(r'^DMA-API: Mapped at:|^ +[\w.]+\+0x[0-9a-f]+/0x[0-9a-f]+')


def read_findings(path):
    """--findings FILE: the known reports of a ULP, one per line,
    "name | regex | regex ...": a report is that finding's when every
    regex matches one of its lines ('#' starts a comment)"""
    findings = []
    with open(path) as f:
        for line in f:
            line = line.split('#', 1)[0].strip()
            if not line:
                continue
            name, *pats = [w.strip() for w in line.split('|')]
            if not pats:
                raise ValueError(f'{path}: finding {name} has no pattern')
            findings.append((name, [re.compile(p) for p in pats]))
    return findings


def report_spans(texts):
    """(first, last) line of each report: from a REPORT_START line to the
    line before the next start, or to an RSIM- line, or to an end of
    trace and the DMA-API "Mapped at" stack after it"""
    spans = []
    start = last = None
    for i, text in enumerate(texts):
        if start is not None and last is not None:
            if REPORT_MORE.search(text):
                last = i
                continue
            spans.append((start, last))
            start = last = None
        if REPORT_START.search(text):
            if start is not None:
                spans.append((start, i - 1))
            start = i
        elif start is not None and 'end trace' in text:
            last = i
        elif start is not None and REPORT_END.search(text):
            spans.append((start, i - 1))
            start = None
    if start is not None:
        spans.append((start, len(texts) - 1 if last is None else last))
    return spans


def finding_of(block, findings):
    """the name of the finding (read_findings) a report's lines are: the
    first whose every regex matches one of them; None otherwise"""
    for fname, pats in findings:
        if all(any(p.search(t) for t in block) for p in pats):
            return fname
    return None


def known_lines(name, texts, findings, problems, accepted=None, must_show=True):
    """the lines of the reports that are known findings; each finding must
    have shown (else it no longer reproduces: the docs must say so) unless
    must_show is false; accepted counts the reports per finding"""
    known = set()
    seen = set()
    for first, last in report_spans(texts):
        fname = finding_of(texts[first:last + 1], findings)
        if fname:
            known.update(range(first, last + 1))
            seen.add(fname)
            if accepted is not None:
                accepted[fname] = accepted.get(fname, 0) + 1
    for fname, _ in findings:
        if must_show and fname not in seen:
            problems.append(f'{name}: known finding {fname} did not show: fixed? '
                            'Update Documentation/ulps.rst and the findings file')
    return known


def clean_log(name, lines, nodebug=False, findings=(), accepted=None, must_show=True):
    """the reports that fail a run, and the protocol lines every log needs
    (a kernel without kmemleak, --nodebug, has no list to read); the
    reports of known findings (--findings) do not, but each must show"""
    problems = []
    texts = [ktap.strip_ts(line) for line in lines]
    known = (known_lines(name, texts, findings, problems, accepted, must_show)
             if findings else set())
    # kmemleak's own "N new suspected memory leaks" names no object: where
    # every object the log lists is a known finding's, it is theirs
    objs = [i for i, t in enumerate(texts) if 'unreferenced object 0x' in t]
    leaks_known = bool(objs) and all(i in known for i in objs)
    for i, text in enumerate(texts):
        if i in known:
            continue
        if leaks_known and re.search(r'kmemleak: \d+ new suspected memory leaks', text):
            continue
        for pat, kind in BAD:
            if re.search(pat, text):
                problems.append(f'{name}: {kind} report at line {i + 1}: {text.strip()}')
                break
        if 'DMA-API:' in text and not DMA_API_OK.search(text):
            problems.append(f'{name}: DMA-API report at line {i + 1}: {text.strip()}')
    if not any('RSIM-DONE' in line for line in lines):
        problems.append(f'{name}: the run did not finish (no RSIM-DONE)')
    leak = ktap.section(lines, 'RSIM-KMEMLEAK-BEGIN', 'RSIM-KMEMLEAK-END')
    if leak is None:
        if not nodebug:
            problems.append(f'{name}: kmemleak was not read')
    else:
        leak = [line for line in leak if line.strip() and 'RSIM-' not in line]
        if leak:
            problems.append(f'{name}: kmemleak lists objects:\n  ' + '\n  '.join(leak[:40]))
    return problems


def judge_kunit(logs, ko, glob, doc, json_out, tally):
    problems = []
    declared = kosuites.module_suites(ko)
    if not declared:
        problems.append(f'{ko} declares no KUnit suite')
    if doc:
        documented = documented_suites(doc)
        for name in documented:
            if name not in declared:
                problems.append(f'suite {name} is documented in {doc} but {ko} does not declare it')
        for name in declared:
            if name not in documented:
                problems.append(f'suite {name} of {ko} is not documented in {doc}')
    want = [s for s in declared if fnmatch.fnmatchcase(s, (glob or '*').split('.')[0])]
    sections = [(name, ktap.section(lines, 'RSIM-KTAP-BEGIN', 'RSIM-KTAP-END'))
                for name, lines in logs]
    sections = [(name, sec) for name, sec in sections if sec is not None]
    if len(sections) != 1:
        problems.append(f'{len(sections)} KTAP sections in the logs, want one')
    run = ktap.parse(sections[0][1] if sections else [])
    suites = {s.name: s for s in run.subtests}
    if json_out:
        with open(json_out, 'w') as f:
            json.dump(run.to_dict(), f, indent=1)
    print('suite                 cases (parameters counted)')
    leaves = [leaf for name in want if name in suites
              for leaf in suites[name].leaves()]
    tally.append(f'{len(want)} KUnit suites, '
                 f'{sum(leaf.status == ktap.PASS for leaf in leaves)} cases passed, '
                 f'{sum(leaf.status == ktap.SKIP for leaf in leaves)} skipped')
    for name in want:
        s = suites.get(name)
        st = 'MISSING' if s is None else 'PASS' if s.ok() else s.status
        print(f'  {name:20} {len(s.leaves()) if s else 0:4}  {st}')
        if s is None:
            problems.append(f'suite {name} is missing from the run')
        elif not s.ok():
            problems.append(f'suite {name}: {s.status}, failed: {s.failed()}')
            for line in s.all_log():
                if 'FAILED' in line or re.match(r'^ {4,}[^ #]', line):
                    print('    ' + line.strip())
    for name in suites:
        if name not in want:
            problems.append(f'suite {name} ran but {ko} does not declare it (or --glob excludes it)')
    return problems


def judge_checks(logs, tally):
    """every RSIM-SELFTEST line of every log (the setup's, the teardown's
    and the shell selftest's checks): none fails, none is lost"""
    problems = []
    total = 0
    failed = 0
    for name, lines in logs:
        st = [ktap.strip_ts(line).split('RSIM-SELFTEST ', 1)[1]
              for line in lines if 'RSIM-SELFTEST ' in line]
        results = [line for line in st if re.match(r'(not )?ok \d+ ', line)]
        plan = [int(m.group(1)) for m in (re.match(r'1\.\.(\d+)$', line) for line in st) if m]
        bad = [line for line in results if line.startswith('not ok')]
        total += len(results)
        failed += len(bad)
        print(f'{name}: RSIM-SELFTEST checks {len(results) - len(bad)} ok, {len(bad)} not ok')
        for line in st:
            if line.startswith('#'):
                print('  ' + line)
        problems += [f'{name}: selftest: {line}' for line in bad]
        if not plan or plan[-1] != len(results):
            problems.append(f'{name}: selftest: {len(results)} results, plan '
                            f'{plan[-1] if plan else "missing"}')
    tally.append(f'{total - failed}/{total} checks ok')
    return problems


def wall(paths):
    """the longest wall time of the boots (LOG.wall, written by the boot's
    runner), or nothing"""
    secs = []
    for path in paths:
        try:
            with open(path + '.wall') as f:
                secs.append(int(f.read().split()[0]))
        except (OSError, ValueError, IndexError):
            pass
    return max(secs) if secs else ''


def conformance_tally(out):
    """the conformance table in a few words: rules x devices that passed"""
    try:
        with open(os.path.join(out, 'conformance.json')) as f:
            doc = json.load(f)
    except (OSError, TypeError, ValueError):
        return 'conformance table unreadable'
    devs = {}
    for rule in doc['rules']:
        for dev, res in rule['results'].items():
            d = devs.setdefault(dev, [0, 0])
            d[0] += res.get('status') == 'PASS'
            d[1] += 1
    return 'conformance ' + ', '.join(f'{dev} {p}/{n}'
                                      for dev, (p, n) in devs.items())


def times(name, lines):
    """the RSIM-PART stages and the suites in them, from printk timestamps"""
    parts, suites = [], []
    for line in lines:
        m = TSTAMP.match(line)
        if not m:
            continue
        t = float(m.group(1))
        text = ktap.strip_ts(line)
        if text.startswith('RSIM-INIT'):
            parts.append((t, 'init'))
        elif text.startswith('RSIM-PART '):
            parts.append((t, text.split()[1]))
        elif text.startswith('RSIM-DONE'):
            parts.append((t, None))
        elif re.match(r'^ {4}# Subtest: ', text):
            suites.append((t, text.split()[-1]))
        elif re.match(r'^RSIM-(KTAP|CONF|MUTANT)-END', text):
            suites.append((t, None))
    print(f'{name}: seconds per stage (printk time)')
    marks = [(0.0, 'kernel boot')] + parts
    for (t, what), (end, _) in zip(marks, marks[1:]):
        print(f'  {what:36} {end - t:7.1f}')
        inside = [(st, sn) for st, sn in suites if t <= st < end]
        for (st, sn), (se, _) in zip(inside, inside[1:]):
            if sn:
                print(f'    {sn:34} {se - st:7.1f}')
    print(f'  {"total":36} {marks[-1][0]:7.1f}')


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('logs', nargs='+')
    ap.add_argument('--kunit', metavar='KO')
    ap.add_argument('--glob')
    ap.add_argument('--doc')
    ap.add_argument('--selftest', action='store_true')
    ap.add_argument('--part', action='append', default=[])
    ap.add_argument('--conformance', metavar='DEVS')
    ap.add_argument('--conformance-module', metavar='KO')
    ap.add_argument('--known', metavar='FILE')
    ap.add_argument('--top', default=os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    ap.add_argument('--json')
    ap.add_argument('--out')
    ap.add_argument('--times', action='store_true')
    ap.add_argument('--nodebug', action='store_true',
                    help='the logs come from the non-debug kernel: no kmemleak list')
    ap.add_argument('--findings', metavar='FILE',
                    help='known reports of a ULP: accepted, and each must show')
    ap.add_argument('--findings-may-show', action='store_true',
                    help='with --findings: a finding need not show')
    ap.add_argument('--summary', metavar='FILE')
    ap.add_argument('--label', default='boot')
    args = ap.parse_args()
    tally = []

    logs = []
    for path in args.logs:
        with open(path, errors='replace') as f:
            logs.append((os.path.basename(path), f.read().splitlines()))
    problems = []
    findings = read_findings(args.findings) if args.findings else ()
    accepted = {}
    for name, lines in logs:
        problems += clean_log(name, lines, args.nodebug, findings, accepted,
                              not args.findings_may_show)
    reports = len(problems)
    if findings:
        tally.append('known findings shown: ' +
                     ', '.join(f'{f} x{accepted.get(f, 0)}' for f, _ in findings))
    if args.kunit:
        problems += judge_kunit(logs, args.kunit, args.glob, args.doc, args.json,
                                tally)
    problems += judge_checks(logs, tally)
    if args.selftest and not any('RSIM-PART selftest' in line
                                 for _, lines in logs for line in lines):
        problems.append('no log ran the shell selftest (RSIM-PART selftest)')
    for part in args.part:
        if not any(line.endswith(f'RSIM-PART {part}')
                   for _, lines in logs for line in lines):
            problems.append(f'no log ran the part {part} (RSIM-PART {part})')
    if args.conformance:
        conf = [path for path, (_, lines) in zip(args.logs, logs)
                if ktap.section(lines, 'RSIM-CONF-BEGIN', 'RSIM-CONF-END') is not None]
        if len(conf) != 1:
            problems.append(f'{len(conf)} logs with conformance results, want one')
        else:
            top = args.top
            cmd = [sys.executable, os.path.join(top, 'scripts', 'conformance-table.py'),
                   conf[0], '--expect', args.conformance, '--judge',
                   '--known', args.known or os.path.join(top, 'kunit', 'conformance',
                                                         'known-divergences'),
                   '--doc', os.path.join(top, 'Documentation', 'conformance.rst')]
            if args.out:
                cmd += ['--out', args.out]
            if args.conformance_module:
                cmd += ['--module', args.conformance_module]
            print()
            res = subprocess.run(cmd, capture_output=True, text=True)
            sys.stdout.write(res.stdout + res.stderr)
            if res.returncode:
                problems.append('conformance: see "conformance FAILED" above')
            tally.append(conformance_tally(args.out))
    if args.times:
        print()
        for name, lines in logs:
            times(name, lines)

    tally.append(f'{reports} log reports' if reports else 'logs clean')
    if args.summary:
        with open(args.summary, 'a') as f:
            f.write(f'{args.label}\t{"FAIL" if problems else "PASS"}\t'
                    f'{"; ".join(tally)}\t{wall(args.logs)}\n')
    if problems:
        print('\nFAILED:')
        for p in problems:
            print('  ' + p)
        return 1
    print('run clean: every suite passed, no reports in the log' +
          (' but the known findings\'' if accepted else ''))
    return 0


if __name__ == '__main__':
    sys.exit(main())
