#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""The conformance suites' results as a table: rule x device.

Reads the KTAP that rdma_conformance.ko printed (a console log with
RSIM-CONF-BEGIN/END markers, or a plain dmesg), prints the table and
writes it, with the same data as JSON, to --out.

With --judge (make check), the run fails when
  - a device named by --expect has no results, or a suite of it is missing;
  - an rdmasim device does not pass every rule;
  - another device fails a rule that is not listed as a known divergence
    of its driver in --known (the table marks listed ones 'known');
  - a listed divergence does not fail any more (the list must stay true),
    or its anchor is missing from --doc (each must be explained).

usage: conformance-table.py LOG [--out DIR] [--known FILE] [--doc RST]
                            [--expect dev,dev] [--judge] [--section MARK]
                            [--module rdma_conformance.ko]

--module: the suites every --expect device must have are the ones the
built module runs by default (read from its ELF by kosuites.py), not
the list in this file.

--section MUTANT reads the KTAP between RSIM-MUTANT-BEGIN and -END (make
check's mutant run) instead of RSIM-CONF-BEGIN and -END; the RSIM-* lines
are described in Documentation/testing.rst ("The console protocol").
"""
import argparse
import json
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ktap  # noqa: E402  (the one KTAP parser)
import kosuites  # noqa: E402

# the suites a run without suites= has, in the order they run (--module
# reads them from the built rdma_conformance.ko instead)
AREAS = ['mr', 'map', 'frwr', 'limits']
PREFIX = 'rdma_conformance_'
SUITE = re.compile(r'^rdma_conformance_(\w+)\.(\S+)$')
RULE = re.compile(r'^ {4}# (\w+): rule: (.*) \[(.*)\]$')
FAILED = re.compile(r'^ {4}# (\w+): (EXPECTATION|ASSERTION) FAILED at (\S+)')
TARGET = re.compile(r'rdma_conformance: target (\S+): driver (\S+), port (\d+), (.*)$')
STATUS = {ktap.PASS: 'PASS', ktap.SKIP: 'SKIP', ktap.FAIL: 'FAIL', ktap.CRASHED: 'FAIL'}


def ktap_lines(path, mark='CONF'):
    """The conformance section of a log, between RSIM-<mark>-BEGIN and
    -END (or the whole of a plain dmesg)."""
    with open(path, errors='replace') if path != '-' else sys.stdin as f:
        lines = [ktap.strip_ts(line) for line in f]
    sec = ktap.section(lines, f'RSIM-{mark}-BEGIN', f'RSIM-{mark}-END')
    return lines if sec is None else sec


def observed(dev, chunks):
    """what a failed rule printed: the lines after each "FAILED at" line,
    its RCF_FAIL messages ("[<device>] ...") and a KUNIT_ASSERT's
    "Expected ..." lines"""
    out = []
    for chunk in chunks:
        failing = False
        for line in chunk:
            if FAILED.match(line):
                failing = True
            elif failing and line.startswith(f'[{dev}] '):
                out.append(line[len(dev) + 3:])
            elif failing and re.match(r'^ {4,}[^ #]', line):
                out.append(line.strip())
            else:
                failing = False
    return out


def parse(lines):
    """devices: {dev: {driver, transport}}, results: {(dev, rule): {...}},
    the (device, area) suites that ran, the rules in the order seen"""
    devices, results, suites, order = {}, {}, set(), []
    for line in lines:
        m = TARGET.search(line)
        if m:
            devices[m.group(1)] = {'driver': m.group(2), 'port': int(m.group(3)),
                                   'transport': m.group(4)}
    for suite in ktap.parse(lines).subtests:
        m = SUITE.match(suite.name)
        if not m:
            continue
        area, dev = m.group(1), m.group(2)
        suites.add((dev, area))
        for case in suite.subtests:
            r = results.setdefault((dev, case.name), new_result(area, case.name))
            r['status'] = STATUS[case.status]
            r['skip'] = case.skip
            r['params'] = [{'name': p.name, 'status': STATUS[p.status], 'skip': p.skip}
                           for p in case.subtests]
            for line in case.all_log():
                m = RULE.match(line)
                if m and m.group(1) == case.name:
                    r['rule'], r['source'] = m.group(2), m.group(3)
            r['observed'] = observed(dev, case.chunks())
            if case.name not in order:
                order.append(case.name)
    return devices, results, suites, order


def module_areas(ko):
    """the suites the built module runs by default: its templates
    (rcf_templates) that its suites= parameter's default names"""
    templates = kosuites.pointed_strings(ko, 'rcf_templates')
    default = kosuites.pointed_strings(ko, 'suites')[0].split(',')
    return [t[len(PREFIX):] for t in templates if t[len(PREFIX):] in default]


def new_result(area, rule):
    return {'area': area, 'name': rule, 'rule': '', 'source': '',
            'status': 'MISSING', 'skip': None, 'observed': [], 'params': []}


def status(ok, skip):
    if ok == 'not ok':
        return 'FAIL'
    return 'SKIP' if skip is not None else 'PASS'


def load_known(path):
    """driver rule anchor, one per line; # starts a comment"""
    known = {}
    if not path:
        return known
    with open(path) as f:
        for n, line in enumerate(f, 1):
            line = line.split('#', 1)[0].split()
            if not line:
                continue
            if len(line) != 3:
                sys.exit(f'{path}:{n}: want "driver rule anchor"')
            known[(line[0], line[1])] = line[2]
    return known


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('log')
    ap.add_argument('--out')
    ap.add_argument('--known')
    ap.add_argument('--doc')
    ap.add_argument('--expect', default='')
    ap.add_argument('--judge', action='store_true')
    ap.add_argument('--section', default='CONF')
    ap.add_argument('--module')
    args = ap.parse_args()

    devices, results, suites, order = parse(ktap_lines(args.log, args.section))
    areas = module_areas(args.module) if args.module else AREAS
    # rows by suite, in the order the suites run, then as first seen
    area_of = {rule: r['area'] for (_, rule), r in results.items()}
    order.sort(key=lambda rule: areas.index(area_of[rule])
               if area_of.get(rule) in areas else len(areas))
    known = load_known(args.known)
    devs = list(devices) or sorted({d for d, _ in results})
    # rdmasim first: the reference the others are read against
    devs.sort(key=lambda d: devices.get(d, {}).get('driver') != 'rdmasim')
    problems = []
    if args.doc:
        with open(args.doc) as f:
            doc = f.read()
        for (drv, rule), anchor in sorted(known.items()):
            if f'.. _{anchor}:' not in doc:
                problems.append(f'{drv} {rule}: anchor {anchor} is not in {args.doc}')

    for d in [x for x in args.expect.split(',') if x]:
        if d not in devices:
            problems.append(f'{d}: no conformance results')
        else:
            for a in areas:
                if (d, a) not in suites:
                    problems.append(f'{d}: suite rdma_conformance_{a}.{d} is missing')

    # one mark per cell; 'known' for a listed divergence that still fails
    cells = {}
    for d in devs:
        drv = devices.get(d, {}).get('driver', '?')
        for rule in order:
            r = results.get((d, rule))
            st = r['status'] if r else 'MISSING'
            anchor = known.get((drv, rule))
            mark = st.lower()
            if drv == 'rdmasim' and st != 'PASS':
                problems.append(f'{d} {rule}: {st} (rdmasim must pass every rule)'
                                + (': ' + '; '.join(r['observed'][:3]) if r and r['observed'] else ''))
                mark = st
            elif st == 'FAIL' and anchor:
                mark = 'known'
            elif st == 'FAIL':
                problems.append(f'{d} {rule}: FAIL, not a known divergence of {drv}: '
                                + '; '.join(r['observed'][:3]))
                mark = 'FAIL'
            elif anchor:
                problems.append(f'{d} {rule}: listed as a known divergence of {drv} '
                                f'({anchor}) but {st.lower()}: update the list')
            elif st == 'MISSING':
                mark = 'MISSING'
                if d in devices:
                    problems.append(f'{d} {rule}: no result')
            cells[(d, rule)] = mark

    color = sys.stdout.isatty()
    out = []
    w = max([len(r) for r in order] + [4]) + 2
    cw = max([len(d) for d in devs] + [8]) + 2
    out.append('rule'.ljust(w) + ''.join(d.ljust(cw) for d in devs))
    area = None
    for rule in order:
        a = next((results[(d, rule)]['area'] for d in devs if (d, rule) in results), '')
        if a != area:
            out.append(f'[{a}]')
            area = a
        out.append(rule.ljust(w) + ''.join(cells.get((d, rule), '-').ljust(cw) for d in devs))
    out.append('')
    out.append('per device:')
    w = max([10] + [len(d) for d in devs])
    for d in devs:
        marks = [cells.get((d, r), 'MISSING') for r in order]
        cnt = {k: marks.count(k) for k in set(marks)}
        info = devices.get(d, {})
        line = (f'  {d:{w}} {info.get("driver", "?"):10} {info.get("transport", "?")}: '
                + ', '.join(f'{cnt[k]} {k}' for k in sorted(cnt)))
        red = any(m in ('FAIL', 'SKIP', 'MISSING') for m in marks) and \
            info.get('driver') == 'rdmasim' or 'FAIL' in marks
        if red:
            line += '   <-- RED'
        out.append(f'\033[31m{line}\033[0m' if color and red else line)
    out.append('')
    out.append('observed where a rule failed (known divergences are explained in '
               'Documentation/conformance.rst):')
    for d in devs:
        drv = devices.get(d, {}).get('driver', '?')
        for rule in order:
            r = results.get((d, rule))
            if not r or r['status'] != 'FAIL':
                continue
            anchor = known.get((drv, rule))
            tag = f'known: #{anchor}' if anchor else 'NOT KNOWN'
            out.append(f'  {d} {rule} [{tag}]')
            for o in r['observed'][:6]:
                out.append(f'      {o}')
            for p in r['params']:
                if p['status'] == 'FAIL':
                    out.append(f'      param {p["name"]}: fail')
    out.append('')
    out.append('rules:')
    for rule in order:
        r = next((results[(d, rule)] for d in devs if (d, rule) in results), None)
        if r:
            out.append(f'  {rule}: {r["rule"]}')
            out.append(f'      [{r["source"]}]')
    text = '\n'.join(l.rstrip() for l in out) + '\n'
    sys.stdout.write(text)

    if args.out:
        os.makedirs(args.out, exist_ok=True)
        with open(os.path.join(args.out, 'conformance.txt'), 'w') as f:
            f.write(text.replace('\033[31m', '').replace('\033[0m', ''))
        doc = {'devices': devices,
               'rules': [{'name': rule,
                          'area': next((results[(d, rule)]['area'] for d in devs
                                        if (d, rule) in results), ''),
                          'rule': next((results[(d, rule)]['rule'] for d in devs
                                        if (d, rule) in results), ''),
                          'source': next((results[(d, rule)]['source'] for d in devs
                                          if (d, rule) in results), ''),
                          'results': {d: {'mark': cells.get((d, rule)),
                                          **({k: results[(d, rule)][k] for k in
                                              ('status', 'skip', 'observed', 'params')}
                                             if (d, rule) in results else {})}
                                      for d in devs}}
                         for rule in order]}
        with open(os.path.join(args.out, 'conformance.json'), 'w') as f:
            json.dump(doc, f, indent=1)

    if args.judge:
        if problems:
            print('conformance FAILED:')
            for p in problems:
                print('  ' + p)
            return 1
        print('conformance: rdmasim passes every rule; every other failure is a '
              'known divergence')
    return 0


if __name__ == '__main__':
    sys.exit(main())
