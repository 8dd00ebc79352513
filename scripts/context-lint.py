#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""context-lint.py FILE...: a function whose comment promises "Context:
any" (or "Any context") must not take a lock that needs a narrower one,
nor sleep, in its body or in the body of any function of the same file it
calls (followed transitively, up to functions that document a context of
their own). Run by scripts/lint.sh; prints each
contradiction as FILE:LINE: function: reason, and exits 1 if there is any.

What a context of "any" rules out: spin_lock_irq()/spin_unlock_irq()
(they re-enable interrupts a caller may have disabled), BH-off locks
(not in hard-IRQ context), mutexes, sleeping waits and GFP_KERNEL
allocations.
"""
import re
import sys

NARROW = [
    (re.compile(r'\b(spin|read|write)_(un)?lock_irq\s*\('),
     'spin_lock_irq re-enables interrupts'),
    (re.compile(r'\b(spin|read|write|xa)_(un)?lock_bh\s*\('),
     'a BH-off lock (not in hard-IRQ context)'),
    (re.compile(r'\bxa_[a-z_]*_bh\s*\('), 'a BH-off lock (not in hard-IRQ context)'),
    (re.compile(r'\bmutex_lock(_[a-z]+)?\s*\('), 'a mutex (sleeps)'),
    (re.compile(r'\b(msleep|usleep_range|wait_event[a-z_]*|wait_var_event|'
                r'wait_for_completion[a-z_]*|might_sleep|cond_resched|'
                r'synchronize_rcu[a-z_]*|flush_work|cancel_[a-z_]*_sync)\s*\('),
     'sleeps'),
    (re.compile(r'\bGFP_KERNEL\b'), 'GFP_KERNEL (sleeps)'),
]
ANY = re.compile(r'Context:\s*(any\b|Any context)', re.I)
FUNC = re.compile(r'^(?:static\s+)?(?:inline\s+)?[A-Za-z_][\w\s\*]*?\b(\w+)\s*\(',
                  re.M)
CALL = re.compile(r'\b([a-z_]\w*)\s*\(')
COMMENT = re.compile(r'/\*.*?\*/|//[^\n]*|"(?:\\.|[^"\\])*"', re.S)


def functions(text):
    """name -> (start line, body text, the comment just before it)"""
    out = {}
    for m in FUNC.finditer(text):
        name = m.group(1)
        if name in ('if', 'for', 'while', 'switch', 'return', 'sizeof'):
            continue
        # the definition's body: the first '{' after the parameter list,
        # unless a ';' comes first (a prototype)
        i = text.find(')', m.end())
        brace = text.find('{', i)
        semi = text.find(';', i)
        if brace < 0 or (0 <= semi < brace):
            continue
        depth, j = 0, brace
        while j < len(text):
            if text[j] == '{':
                depth += 1
            elif text[j] == '}':
                depth -= 1
                if depth == 0:
                    break
            j += 1
        start = text.rfind('\n', 0, m.start()) + 1
        before = text[:start].rstrip()
        comment = ''
        if before.endswith('*/'):
            comment = before[before.rfind('/*'):]
        out[name] = (text.count('\n', 0, m.start()) + 1,
                     COMMENT.sub(' ', text[brace:j + 1]), comment)
    return out


def check(path):
    text = open(path, encoding='utf-8').read()
    funcs = functions(text)
    bad = []
    for name, (line, body, comment) in funcs.items():
        if not ANY.search(comment):
            continue
        seen, todo = set(), [name]
        while todo:
            f = todo.pop()
            if f in seen or f not in funcs:
                continue
            seen.add(f)
            fbody = funcs[f][1]
            for pat, why in NARROW:
                if pat.search(fbody):
                    via = '' if f == name else f' (in {f}(), which it calls)'
                    bad.append(f'{path}:{line}: {name}(): Context: any, '
                               f'but {why}{via}')
            # a callee that documents its own context is a contract the
            # caller keeps (by a check this script cannot see): not followed
            todo.extend(c for c in CALL.findall(fbody)
                        if c in funcs and 'Context:' not in funcs[c][2])
    return bad


def main():
    bad = []
    for path in sys.argv[1:]:
        bad += check(path)
    for b in bad:
        print(b)
    return 1 if bad else 0


if __name__ == '__main__':
    sys.exit(main())
