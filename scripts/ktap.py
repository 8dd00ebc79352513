# SPDX-License-Identifier: GPL-2.0-only
"""The one KTAP parser of the harness (judge-log.py, conformance-table.py).

KUnit prints a run as nested KTAP: a test's header ("KTAP version 1",
"# Subtest: <name>", an optional plan "1..N") and its children's result
lines are indented four spaces deeper than its own result line
("ok N <name>", "not ok N <name> [# SKIP reason]"). Everything else inside
a test (its "# ..." diagnostics, the "Expected ..." lines of a failed
expectation, kernel messages printed while it ran) is kept, in order, as
the log of the test that was open when it was printed: a leaf case owns
the lines printed since the previous result at its level.

parse(lines) returns the root Test (the run); its subtests are the
suites, theirs the cases, theirs a parameterised case's parameters. A test
whose result line never came (the kernel crashed or the module hung) is
CRASHED; a test that printed fewer results than its plan is FAILED.
"""
import re

TS = re.compile(r'^\[\s*\d+\.\d+\]\s?')
VERSION = re.compile(r'^(K?TAP) version \d+\s*$')
SUBTEST = re.compile(r'^# Subtest: (.+?)\s*$')
PLAN = re.compile(r'^1\.\.(\d+)\s*$')
RESULT = re.compile(r'^(ok|not ok) (\d+)(?: (.*?))?(?: # (SKIP)\b ?(.*?))?\s*$')

PASS, FAIL, SKIP, CRASHED = 'PASS', 'FAIL', 'SKIP', 'CRASHED'


class Test:
    def __init__(self, depth, name=''):
        self.depth = depth      # 0: the run, 1: a suite, 2: a case, 3: a parameter
        self.name = name
        self.status = CRASHED   # until its result line
        self.skip = None        # the reason of a SKIP
        self.plan = None
        self.subtests = []
        self.pre = []           # lines printed before its header
        self.log = []

    def chunks(self):
        """the test's lines and its subtests', in the order printed, in
        chunks: before its header, each subtest's, after the last one"""
        out = [self.pre]
        for sub in self.subtests:
            out += sub.chunks()
        return out + [self.log]

    def all_log(self):
        return [line for chunk in self.chunks() for line in chunk]

    def leaves(self):
        """the cases, each parameter of a parameterised case counted"""
        if not self.subtests:
            return [self]
        return [leaf for sub in self.subtests for leaf in sub.leaves()]

    def failed(self):
        """names of the failed or crashed leaves under this test"""
        return [leaf.name for leaf in self.leaves() if leaf.status in (FAIL, CRASHED)]

    def ok(self):
        return self.status in (PASS, SKIP) and not self.failed()

    def to_dict(self):
        return {'name': self.name, 'status': self.status, 'skip': self.skip,
                'log': self.log, 'subtests': [s.to_dict() for s in self.subtests]}


def strip_ts(line):
    return TS.sub('', line.rstrip('\n'))


def parse(lines):
    """lines: console lines (printk timestamps are stripped here)"""
    root = Test(0)
    root.status = PASS
    stack = [root]
    pending = []            # lines since the last result, for a leaf
    for raw in lines:
        line = strip_ts(raw)
        body = line.lstrip(' ')
        level = (len(line) - len(body)) // 4
        top = stack[-1]
        if VERSION.match(body) or SUBTEST.match(body):
            m = SUBTEST.match(body)
            if m and level == top.depth > 0 and not top.name and not top.subtests:
                top.name = m.group(1)      # "# Subtest:" after "KTAP version"
            elif level == top.depth + 1:
                child = Test(level, m.group(1) if m else '')
                child.pre, pending = pending, []
                stack.append(child)
            elif level > 0 or top is not root:
                pending.append(line)
            continue
        m = PLAN.match(body)
        if m and level == top.depth and top.plan is None:
            top.plan = int(m.group(1))
            continue
        m = RESULT.match(body)
        if m and level <= top.depth:
            # close what never printed its result (a crash inside it)
            while stack[-1].depth > level + 1:
                lost = stack.pop()
                lost.log += pending
                pending = []
                stack[-1].subtests.append(lost)
            top = stack[-1]
            if top.depth == level + 1:
                test = stack.pop()          # a test with a header
                test.log += pending
            else:
                test = Test(level + 1)      # a leaf
                test.log = pending
            pending = []
            test.name = m.group(3) or test.name
            if m.group(4):
                test.status, test.skip = SKIP, m.group(5)
            else:
                test.status = PASS if m.group(1) == 'ok' else FAIL
            if test.plan is not None and len(test.subtests) < test.plan:
                test.status = FAIL
                test.log.append(f'# {len(test.subtests)} results of {test.plan} planned')
            stack[-1].subtests.append(test)
            continue
        pending.append(line)
    # a run cut short: whatever is still open crashed
    while len(stack) > 1:
        lost = stack.pop()
        lost.log += pending
        pending = []
        stack[-1].subtests.append(lost)
    root.log += pending
    return root


def section(lines, begin, end):
    """the lines between the last <begin> marker and the <end> after it;
    None when the log has no such section"""
    b = [i for i, line in enumerate(lines) if begin in line]
    if not b:
        return None
    rest = lines[b[-1] + 1:]
    e = next((i for i, line in enumerate(rest) if end in line), len(rest))
    return rest[:e]
