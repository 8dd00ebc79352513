#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
#
# guest/rdma-core-tests.py <rdma-core source> <device> [timeout s] [pattern...]
# (patterns: also RSIM_RDMA_CORE_TESTS, space-separated)
#
# rdma-core's own tests (tests/, pyverbs) on one RDMA device, as its
# run_tests.py loads them, with one line per test on stdout:
#
#   RSIM-RDMACORE <device> <ok|skip|fail|error|notrun> <test id> [reason]
#
# (a skip's reason is unittest's, which names what the device lacks; a
# fail or error's is the exception that ended it), then
#
#   RSIM-RDMACORE <device> total <n> ok <n> skip <n> fail <n> error <n> notrun <n>
#
# The vendor tests, which need mlx5 or EFA hardware and skip anywhere else
# (tests.test_mlx5_*, tests.test_efa*; a third of the run's time), are not
# run but listed as notrun, unless RSIM_RDMA_CORE_EXCLUDE (fnmatch
# patterns, space-separated) says otherwise; RSIM_RDMA_CORE_EXCLUDE=none
# runs them all. So are the rdma_cm multicast tests on a device whose
# netdev has IPv6 addresses only (IPV4_ONLY below).
#
# A test still running after the timeout (default 120 s) is interrupted
# (SIGALRM) and counted as an error, so that one hung test costs the run
# no more than that. Patterns (fnmatch, on the test id) pick tests.
# Runs inside the UML test kernel (scripts/guest/rdma-core-tests.sh) with
# PYTHONPATH naming the build's pyverbs.

import fnmatch
import json
import os
import signal
import subprocess
import sys
import unittest
from importlib.machinery import SourceFileLoader


class Timeout(Exception):
    pass


def on_alarm(signum, frame):
    raise Timeout("test timed out")


class LineResult(unittest.TestResult):
    def __init__(self, dev, counts):
        super().__init__()
        self.dev = dev
        self.counts = counts

    def line(self, status, test, reason=""):
        self.counts[status] += 1
        reason = " ".join(str(reason).split())
        print(f"RSIM-RDMACORE {self.dev} {status} {test.id()} {reason}".rstrip(),
              flush=True)

    def addSuccess(self, test):
        super().addSuccess(test)
        self.line("ok", test)

    def addSkip(self, test, reason):
        super().addSkip(test, reason)
        self.line("skip", test, reason)

    def addExpectedFailure(self, test, err):
        super().addExpectedFailure(test, err)
        self.line("ok", test, "expected failure")

    def addUnexpectedSuccess(self, test):
        super().addUnexpectedSuccess(test)
        self.line("fail", test, "unexpected success")

    @staticmethod
    def why(err):
        etype, value, _ = err
        return f"{etype.__name__}: {value}"

    def addFailure(self, test, err):
        super().addFailure(test, err)
        self.line("fail", test, self.why(err))

    def addError(self, test, err):
        super().addError(test, err)
        self.line("error", test, self.why(err))


# Tests that cannot work as the suite wrote them on a device whose netdev
# has IPv6 addresses only (every test network here: link-local, never a
# routable IPv4 address): tests/base.py makes the multicast group from the
# IPv4 address's last octets, and with an IPv6 address builds no group at
# all (Documentation/ulps.rst, Findings). They are listed as notrun with
# this reason on such a device, and run anywhere else.
IPV4_ONLY = ("*.test_rdmacm_async_multicast_traffic",
             "*.test_rdmacm_async_ex_multicast_traffic",
             "*.test_rdmacm_async_ex_leave_multicast_traffic")
IPV4_ONLY_WHY = ("needs an IPv4 address: tests/base.py makes the multicast "
                 "group from one (the netdev has IPv6 only; "
                 "Documentation/ulps.rst, Findings)")


def ipv6_only(dev):
    """the netdev of the device's port 1, as tests/base.py finds it (rdma
    link show), has a first address (the one the tests use) that is not
    IPv4"""
    try:
        links = json.loads(subprocess.run(["rdma", "-j", "link", "show"],
                                          capture_output=True,
                                          check=True).stdout)
        net = [r["netdev"] for r in links
               if r.get("ifname") == dev and r.get("port") == 1]
        out = subprocess.run(["ip", "-j", "addr", "show", net[0]],
                             capture_output=True, check=True).stdout
        return "." not in json.loads(out)[0]["addr_info"][0]["local"]
    except (OSError, IndexError, KeyError, ValueError,
            subprocess.CalledProcessError):
        return False


def flatten(suite):
    for t in suite:
        if isinstance(t, unittest.TestSuite):
            yield from flatten(t)
        else:
            yield t


def main():
    src, dev = sys.argv[1], sys.argv[2]
    limit = int(sys.argv[3]) if len(sys.argv) > 3 else 120
    patterns = sys.argv[4:] + os.environ.get("RSIM_RDMA_CORE_TESTS",
                                             "").split()
    sys.path.insert(0, os.path.join(src, "tests"))
    from args_parser import parser
    sys.argv = [sys.argv[0], "--dev", dev]
    parser.parse_args()
    tests = SourceFileLoader("tests", os.path.join(src, "tests",
                                                  "__init__.py")).load_module()
    loader = unittest.TestLoader()
    suite = loader.loadTestsFromModule(tests)
    counts = {"ok": 0, "skip": 0, "fail": 0, "error": 0, "notrun": 0}
    exclude = os.environ.get("RSIM_RDMA_CORE_EXCLUDE",
                             "tests.test_mlx5_* tests.test_efa*").split()
    if exclude == ["none"]:
        exclude = []
    result = LineResult(dev, counts)
    v6 = ipv6_only(dev)
    signal.signal(signal.SIGALRM, on_alarm)
    for test in flatten(suite):
        if patterns and not any(fnmatch.fnmatch(test.id(), p)
                                for p in patterns):
            continue
        if any(fnmatch.fnmatch(test.id(), p) for p in exclude):
            result.line("notrun", test, "vendor test: needs mlx5 or EFA "
                        "hardware")
            continue
        if v6 and any(fnmatch.fnmatch(test.id(), p) for p in IPV4_ONLY):
            result.line("notrun", test, IPV4_ONLY_WHY)
            continue
        signal.alarm(limit)
        try:
            test(result)
        except Timeout as e:
            result.addError(test, (Timeout, e, None))
        finally:
            signal.alarm(0)
    total = sum(counts.values())
    print(f"RSIM-RDMACORE {dev} total {total} ok {counts['ok']} "
          f"skip {counts['skip']} fail {counts['fail']} "
          f"error {counts['error']} notrun {counts['notrun']}", flush=True)


if __name__ == "__main__":
    main()
