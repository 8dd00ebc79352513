#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""peers-table.py --out DIR [--txt F] [--json F] [--svg F] DEV...

The table of make peers (scripts/peers.sh): every test of the outside
suites x device (rdmasim, siw, rxe) -> pass / fail (blktests' reason) /
not run (its skip reason), with seconds; each suite's wall time; every
kernel report, with the test that was running when it was printed; the
boot's own kmemleak objects (cleared before the suites, not charged).

It reads the suites' own files: blktests' result files (DIR/<dev>/blktests/
<results dir>/<group>/<test>, "key<TAB>value" lines, the files ./check
writes and reads back) and, for what those files do not hold (a skip's
reasons, which ./check prints only), ./check's output and the kernel's
messages in the boot's console log (DIR/<dev>/console.log), where
blktests' own "run blktests <test> at <date>" marker starts each test.

Exits 1 when rdmasim falls short of the acceptance: a test that passes on
siw or rxe but not on rdmasim, or a kernel report charged to rdmasim.
"""

import argparse
import glob
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


def kind_of(block):
    """the kind of the first of judge-log.py's reports a block shows"""
    for text in block:
        for pat, kind in jlp.BAD:
            if re.search(pat, text):
                return kind
    return None

MARKER = re.compile(r'run blktests (\S+) at ')
# ./check's status line: "nvme/010 (bd=device) (description)   [passed]"
STATUS = re.compile(r'^(\w+/\d+) (?:\((\w+=[^)]*)\) )?.*\[(passed|failed|not run)\]\s*$')
ANSI = re.compile(r'\x1b\[[0-9;]*[A-Za-z]')
PEER = re.compile(r'RSIM-PEER (begin|end) (\S+) dev=(\S+)(?: wall=(\d+))?')
BOOTLEAK = re.compile(r'RSIM-PEER kmemleak-before-suites objects=(\d+)')
TS = re.compile(r'^\[\s*\d+\.\d+\]\s?')


def cond_of(resdir):
    """nodev_tr_rdma_bd_device -> "tr=rdma bd=device" (./check's
    COND_DESC, spaces and '=' made '_'); nodev -> ''"""
    words = resdir.split('_')[1:]
    return ' '.join(f'{k}={v}' for k, v in zip(words[::2], words[1::2]))


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


def blktests_results(devdir):
    """{(test, cond): {status, reason, seconds, kmemleak}}"""
    out = {}
    base = os.path.join(devdir, 'blktests')
    for path in glob.glob(os.path.join(base, 'nodev*', '*', '[0-9]*')):
        name = os.path.basename(path)
        if not re.fullmatch(r'\d+', name):
            continue
        resdir = os.path.relpath(path, base).split(os.sep)[0]
        group = os.path.basename(os.path.dirname(path))
        r = read_result(path)
        key = (f'{group}/{name}', cond_of(resdir))
        out[key] = {
            'status': {'pass': 'pass', 'fail': 'fail'}.get(r.get('status', ''),
                                                          r.get('status', '?')),
            'reason': r.get('reason', ''),
            'seconds': seconds(r.get('runtime', '')),
            'kmemleak': os.path.exists(path + '.kmemleak'),
        }
    return out


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
            skips[(m.group(1), m.group(2) or '')] = '; '.join(reasons)
    return skips


def read_lines(path):
    """a log's lines less kernel timestamps and terminal escapes; [] when
    it is not there"""
    try:
        with open(path, errors='replace') as f:
            return [ANSI.sub('', TS.sub('', line.rstrip('\n'))) for line in f]
    except OSError:
        return []


def read_console(lines):
    """the suites' wall times, kernel reports with their tests, the boot's
    kmemleak count"""
    walls, reports = {}, []
    bootleak = None
    current = None      # the test blktests marked last
    pending = []        # reports since that marker, before its status
    last_done = None
    starts = dict(jlp.report_spans(lines))
    for i, text in enumerate(lines):
        m = MARKER.search(text)
        if m:
            current, pending = m.group(1), []
        m = STATUS.match(text)
        if m:
            key = (m.group(1), m.group(2) or '')
            for rep in pending:
                rep['test'] = f'{key[0]} ({key[1]})' if key[1] else key[0]
            pending, current, last_done = [], None, key
        m = PEER.search(text)
        if m and m.group(1) == 'end':
            walls[m.group(2)] = int(m.group(4))
        m = BOOTLEAK.search(text)
        if m:
            bootleak = int(m.group(1))
        if i in starts:
            block = lines[i:starts[i] + 1]
            kind = kind_of(block)
            if kind:
                rep = {'kind': kind, 'title': title_of(block), 'line': i + 1,
                       'count': 1}
                if current:
                    rep['test'] = current
                    pending.append(rep)
                elif last_done:
                    rep['test'] = f'after {last_done[0]}'
                else:
                    rep['test'] = 'outside the suites'
                reports.append(rep)
    return walls, reports, bootleak


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


def cell(r):
    if r is None:
        return '-'
    s = r['status']
    t = f" {r['seconds']:.0f}s" if r.get('seconds') is not None else ''
    if s == 'pass':
        return 'pass' + t
    if s == 'fail':
        return f"FAIL({r['reason']})" + t
    return 'not run'


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

    results, walls, reports, bootleaks = {}, {}, [], {}
    for dev in a.devs:
        d = os.path.join(a.out, dev)
        res = blktests_results(d)
        console = read_lines(os.path.join(d, 'console.log'))
        w, reps, bl = read_console(console)
        # ./check's own output, where it was kept, over the console's copy
        skips = skip_reasons(console)
        skips.update(skip_reasons(read_lines(os.path.join(d, 'blktests', 'check.log'))))
        for key, r in res.items():
            if r['status'] == 'not run':
                r['reason'] = skips.get(key, '')
        results[dev] = res
        walls[dev] = w
        bootleaks[dev] = bl
        for rep in reps:
            rep['dev'] = dev
        reports += reps
    reports = merge_reports(reports)

    keys = sorted({k for res in results.values() for k in res},
                  key=lambda k: (k[0].split('/')[0], int(k[0].split('/')[1]), k[1]))
    width = max([len(f'{t} ({c})') for t, c in keys] + [10])
    lines = []
    head = f"{'test':<{width}}  " + '  '.join(f'{d:<18}' for d in a.devs)
    lines += [head, '-' * len(head)]
    short = []
    notrun = {}
    for t, c in keys:
        name = f'{t} ({c})' if c else t
        row = [results[d].get((t, c)) for d in a.devs]
        lines.append(f'{name:<{width}}  ' + '  '.join(f'{cell(r):<18}' for r in row))
        for d, r in zip(a.devs, row):
            if r and r['status'] == 'not run':
                notrun.setdefault((r['reason'] or 'no reason printed'), {}).setdefault(
                    d, []).append(name)
        others = [results[d].get((t, c)) for d in a.devs if d != 'rdmasim']
        mine = results.get('rdmasim', {}).get((t, c))
        if 'rdmasim' in a.devs and any(o and o['status'] == 'pass' for o in others) \
                and not (mine and mine['status'] == 'pass'):
            short.append(f'{name}: passes on another device, {cell(mine)} on rdmasim')
    lines.append('')
    lines.append('suite wall time (s): ' + ', '.join(
        f"{d} {walls[d].get('blktests', '?')}" for d in a.devs))
    lines.append('tests: ' + ', '.join(
        f"{d} {sum(r['status'] == 'pass' for r in results[d].values())} pass / "
        f"{sum(r['status'] == 'fail' for r in results[d].values())} fail / "
        f"{sum(r['status'] == 'not run' for r in results[d].values())} not run"
        for d in a.devs))
    lines.append('')
    lines.append('not run, by reason:')
    for reason, per in sorted(notrun.items()):
        lines.append(f'  {reason}')
        for d in a.devs:
            if d in per:
                lines.append(f"    {d}: {' '.join(per[d])}")
    lines.append('')
    lines.append('kernel reports (device, test, kind, first line):')
    if not reports:
        lines.append('  none')
    for rep in reports:
        n = f" (x{rep['count']})" if rep['count'] > 1 else ''
        lines.append(f"  {rep['dev']:<8} {rep['test']:<24} {rep['kind']:<10} {rep['title']}{n}")
    lines.append('')
    lines.append('notes:')
    for d in a.devs:
        bl = bootleaks.get(d)
        lines.append(f"  {d}: kmemleak objects of the boot, cleared before the suites: "
                     f"{'?' if bl is None else bl}")
    lines.append('  the nvmet/rdma_cm lockdep report (Documentation/ulps.rst, Findings) '
                 'does not fire: the test kernel gives listening IDs\' handler_mutex a '
                 'lockdep class of their own (kunit/patches/7.3/)')
    charged = [r for r in reports if r['dev'] == 'rdmasim']
    if a.require_pass:
        for d in a.devs:
            if not results[d]:
                short.append(f'{d}: no test ran')
            for (t, c), r in sorted(results[d].items()):
                if r['status'] != 'pass':
                    name = f'{t} ({c})' if c else t
                    short.append(f'{name} on {d}: {cell(r)} {r["reason"]}'.rstrip())
    lines.append('')
    lines.append('acceptance: ' + ('met' if not short and not charged else 'NOT met'))
    for s in short:
        lines.append(f'  {s}')
    for r in charged:
        lines.append(f"  kernel report on rdmasim in {r['test']}: {r['title']}")
    text = '\n'.join(lines) + '\n'
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
                'boot_kmemleak_objects_cleared': bootleaks,
                'tests': [{'suite': 'blktests', 'test': t, 'cond': c,
                           'results': {d: results[d].get((t, c)) for d in a.devs}}
                          for t, c in keys],
                'reports': reports,
                'acceptance': {'short': short,
                               'reports_on_rdmasim': charged},
            }, f, indent=1)
    if a.svg:
        with open(a.svg, 'w') as f:
            f.write(svg(keys, results, walls, a.devs))
    return 1 if short or charged else 0


def svg(keys, results, walls, devs):
    """the table as a picture: a row per test, a column per device,
    green pass, red fail, grey not run, the seconds in each cell; the
    suites' wall times as bars under it"""
    cw, rh, lw = 110, 16, 200
    colour = {'pass': '#5cb85c', 'fail': '#d9534f', 'not run': '#cccccc'}
    h = 40 + rh * len(keys) + 30 + 22 * len(devs) + 20
    w = lw + cw * len(devs) + 20
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" '
           'font-family="monospace" font-size="11">',
           f'<rect width="{w}" height="{h}" fill="white"/>',
           '<text x="4" y="14" font-size="13">make peers: blktests on '
           'rdmasim, siw and rxe (debug UML kernel)</text>']
    for j, d in enumerate(devs):
        out.append(f'<text x="{lw + j * cw + 4}" y="34">{d}</text>')
    for i, (t, c) in enumerate(keys):
        y = 40 + i * rh
        name = f'{t} ({c})' if c else t
        out.append(f'<text x="4" y="{y + 12}">{name}</text>')
        for j, d in enumerate(devs):
            r = results[d].get((t, c))
            fill = colour.get(r['status'], '#ffffff') if r else '#ffffff'
            label = cell(r).replace('not run', 'skip')
            out.append(f'<rect x="{lw + j * cw}" y="{y}" width="{cw - 2}" '
                       f'height="{rh - 2}" fill="{fill}"/>')
            out.append(f'<text x="{lw + j * cw + 3}" y="{y + 11}">{label}</text>')
    y = 40 + rh * len(keys) + 24
    out.append(f'<text x="4" y="{y}">suite wall time</text>')
    most = max([walls[d].get('blktests', 0) for d in devs] + [1])
    for j, d in enumerate(devs):
        s = walls[d].get('blktests', 0)
        yy = y + 8 + j * 22
        out.append(f'<text x="4" y="{yy + 12}">{d}</text>')
        out.append(f'<rect x="{lw}" y="{yy}" width="{max(1, int(s / most * cw * len(devs)))}" '
                   f'height="16" fill="#428bca"/>')
        out.append(f'<text x="{lw + 4}" y="{yy + 12}" fill="white">{s} s</text>')
    out.append('</svg>\n')
    return '\n'.join(out)


if __name__ == '__main__':
    sys.exit(main())
