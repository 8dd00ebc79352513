#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""peers-table.py's own test: its known flakes (scripts/peers/known-flakes)
against crafted blktests results and consoles.

Two rounds of blktests nvme/061 on rdmasim, the second failed. The table
may give the failure as the known flake only when the test's own output
(061.out.bad) and the console while that run went (from its "run
blktests nvme/061 at <date>", the date of its result file, to the next
marker) both show it; else the rounds differ and the acceptance is not
met. make check runs this with the log judge's test; it needs python3.
"""
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
DATES = ['2026-12-07 02:08:25', '2026-12-07 02:37:40']
BAD = ('Running nvme/061\niteration 2\nstate: connecting\n'
       'expected state "live" not  reached within 5 seconds\n')
REFUSED = ('nvme nvme0: Connect for subsystem blktests-subsystem-1 is not '
           'allowed, hostnqn: nqn.2014-08.org.nvmexpress:uuid:0f01fb42')


def result(path, status, date, bad=None):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, 'w') as f:
        f.write(f'runtime\t17.186s\ndescription\ttest fabric target teardown\n'
                f'exit_status\t0\nreason\t{"output" if status == "fail" else ""}\n'
                f'date\t{date}\nstatus\t{status}\n')
    if bad is not None:
        with open(path + '.out.bad', 'w') as f:
            f.write(bad)


def run(tmp, bad, console_at, console_line=REFUSED):
    """the table of two rounds whose second failed with output <bad>,
    <console_line> on the console while run <console_at> went"""
    dev = os.path.join(tmp, 'rdmasim')
    result(os.path.join(dev, 'blktests', 'nodev_tr_rdma', 'nvme', '061'),
           'pass', DATES[0])
    result(os.path.join(dev, 'blktests.round2', 'nodev_tr_rdma', 'nvme', '061'),
           'fail', DATES[1], bad)
    lines = []
    for i, date in enumerate(DATES):
        lines.append(f'[ {10.0 + i:.6f}] run blktests nvme/061 at {date}')
        if i == console_at:
            lines.append(f'[ {10.5 + i:.6f}] {console_line}')
    lines.append('[ 12.000000] run blktests nvme/062 at 2026-12-07 02:38:00')
    with open(os.path.join(dev, 'console.log'), 'w') as f:
        f.write('\n'.join(lines) + '\n')
    txt = os.path.join(tmp, 'table.txt')
    rc = subprocess.run([sys.executable, os.path.join(HERE, 'peers-table.py'),
                         '--out', tmp, '--txt', txt, 'rdmasim'],
                        check=False).returncode
    with open(txt) as f:
        return rc, f.read()


CASES = [
    # name, out.bad, run whose console refused, want rc, want in the table
    ('both marks: the known flake', BAD, 1, 0,
     'nvme/061: pass fail (blktests-nvme-061-host-allowed-after-port'),
    ('refusal in the run before: the device\'s', BAD, 0, 1,
     'results that differ between rounds'),
    ('another failure, same console: the device\'s',
     'Running nvme/061\nfio: I/O error\n', 1, 1,
     'results that differ between rounds'),
    ('no refusal on the console: the device\'s', BAD, None, 1,
     'rdmasim: blktests results differ between rounds'),
]


def main():
    failed = 0
    for name, bad, at, want_rc, want in CASES:
        with tempfile.TemporaryDirectory() as tmp:
            rc, text = run(tmp, bad, at)
        ok = rc == want_rc and want in text
        print(f"{'ok' if ok else 'FAIL'}: {name} (exit {rc})")
        if not ok:
            print(text)
            failed += 1
    print(f'{len(CASES) - failed}/{len(CASES)} cases passed')
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main())
