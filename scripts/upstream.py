#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""make upstream: rdmasim as a kernel patch series, made from this tree.

  upstream.py --ksrc DIR --out DIR [--rdma-core DIR]

Writes DIR/kernel/NNNN-*.patch, a series for the kernel source in --ksrc
(Debian's 7.3), with its cover letter (0000): the RDMA_DRIVER_RDMASIM id,
the uAPI header (include/uapi/rdma/rdmasim-abi.h) with the MAINTAINERS
entry, the driver in drivers/infiniband/sw/rdmasim/ a concern per patch
(DRIVER_PARTS) and then its Kconfig and Makefile hooks, the KUnit suites
a group per patch (KUNIT_PARTS), a kselftest and the documentation. The out-of-tree tree stays the source of truth;
the series is made from it each time:

- compat.h's shims are stripped: the kernel's feature probes (Kbuild's
  RSIM_PROBES) are evaluated against --ksrc, unifdef keeps the branch
  that kernel takes, the aliases left (macros) are expanded in the code,
  and the few helpers left join the driver's private header;
- the out-of-tree build's module parameters (modparams.c) are left out;
- the uAPI header moves to include/uapi/rdma/, the PUDA and KUnit-visible
  headers into the driver's directory; the device registers as
  RDMA_DRIVER_RDMASIM; MODULE_VERSION goes.

Each patch is a commit of a scratch git repository that starts with the
kernel's own versions of the files the series touches; git format-patch
writes the series. With --rdma-core, DIR/rdma-core/ gets rdma-core's
series too: the kernel headers (the driver id, rdmasim-abi.h), then
providers/rdmasim/ (tools/provider/rdmasim.c) with its CMake hooks and
MAINTAINERS entry, then the pyverbs tests (tests/test_rdmasim.py, from
tools/provider/tests/). scripts/upstream-check.sh applies both, runs
checkpatch --strict on the kernel's, builds both and runs the tests in
the patched kernel's boot.
"""

import argparse
import os
import re
import shutil
import subprocess
import sys

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DRV = "drivers/infiniband/sw/rdmasim"
AUTHOR = "rdmasim developers <rdmasim@example.org>"


def sh(args, **kw):
    return subprocess.run(args, check=True, capture_output=True, text=True,
                          **kw).stdout


def probes(ksrc):
    """Kbuild's RSIM_PROBES, evaluated against the kernel in ksrc, and
    what every architecture of a 6.4+ kernel defines"""
    with open(os.path.join(TOP, "Kbuild")) as f:
        kb = f.read()
    block = kb[kb.index("RSIM_PROBES := \\"):kb.index("# The KUnit suites")]
    res = {}
    for m in re.finditer(r"\$\(call (rsim_probe(?:_after)?),(.*?)\)\s*\\?\n",
                         block):
        kind, args = m.group(1), m.group(2).replace("$(comma)", ",")
        parts = [p.strip() for p in re.findall(r"'[^']*'|[^,]+", args)]
        if kind == "rsim_probe":
            path, pat, name = parts
            ok = subprocess.run(["grep", "-qsE", pat.strip("'"),
                                 os.path.join(ksrc, path)]).returncode == 0
        else:
            path, n, pat, pat2, name = parts
            out = subprocess.run(["grep", f"-A{n}", "-sE", pat.strip("'"),
                                  os.path.join(ksrc, path)],
                                 capture_output=True, text=True).stdout
            ok = subprocess.run(["grep", "-qsE", pat2.strip("'")], input=out,
                                text=True).returncode == 0
        res[name] = ok
    res["ARCH_DMA_MINALIGN"] = True
    res["RSIM_HAVE_DMAH_OPS"] = res.get("RSIM_HAVE_IB_DMAH", False)
    return res


def unifdef(text, defs):
    args = ["unifdef", "-URSIM_MODPARAMS"]
    for name, on in defs.items():
        args.append(("-D" if on else "-U") + name)
    r = subprocess.run(args, input=text, capture_output=True, text=True)
    if r.returncode not in (0, 1):
        raise SystemExit("unifdef: " + r.stderr)
    return r.stdout


def macros(text):
    """#define NAME[(params)] body, of a header with no conditionals left"""
    text = text.replace("\\\n", " ")
    found = []
    for m in re.finditer(r"^#define\s+(\w+)(\(([^)]*)\))?[ \t]*(.*)$", text,
                         re.M):
        name, params, body = m.group(1), m.group(3), m.group(4).strip()
        if name.endswith("_H"):
            continue
        body = " ".join(re.sub(r"/\*.*?\*/", "", body).split())
        found.append((name, [p.strip() for p in params.split(",")]
                      if params is not None else None, body))
    return found


def call_args(text, start):
    """the arguments of the call whose '(' is at start, and its end"""
    depth, args, cur, i = 0, [], "", start
    while i < len(text):
        c = text[i]
        if c == "(":
            depth += 1
            if depth > 1:
                cur += c
        elif c == ")":
            depth -= 1
            if depth == 0:
                args.append(cur.strip())
                return args, i + 1
            cur += c
        elif c == "," and depth == 1:
            args.append(cur.strip())
            cur = ""
        else:
            cur += c
        i += 1
    raise ValueError("unbalanced call")


def expand(text, defs):
    """expand the compat macros in text (repeatedly: one may use another)"""
    for _ in range(4):
        before = text
        for name, params, body in defs:
            if params is None:
                text = re.sub(r"\b%s\b" % name, lambda _m: body, text)
                continue
            out, pos = "", 0
            for m in re.finditer(r"\b%s\s*\(" % name, text):
                if m.start() < pos:
                    continue
                args, end = call_args(text, m.end() - 1)
                sub = body
                for p, a in zip(params, args):
                    sub = re.sub(r"\b%s\b" % re.escape(p), lambda _m, a=a: a,
                                 sub)
                out += text[pos:m.start()] + sub
                pos = end
            text = out + text[pos:]
        if text == before:
            break
    return text


def compat_parts(ksrc, defs):
    """the macros compat.h leaves for this kernel, and the rest of it"""
    with open(os.path.join(TOP, "include/rdmasim/compat.h")) as f:
        reduced = unifdef(f.read(), defs)
    ms = [m for m in macros(reduced) if not m[0].startswith("RDMASIM_COMPAT")]
    # what is not a macro: the helpers (static inline), declarations and
    # includes, which join the driver's private header; the comments went
    # with the shims they explained
    rest = re.sub(r"^#(ifndef|define|endif).*RDMASIM_COMPAT_H.*$", "",
                  reduced, flags=re.M)
    rest = re.sub(r"/\*.*?\*/", "", rest, flags=re.S)
    kept, skipping = [], False
    for line in rest.splitlines():
        if skipping or line.startswith("#define"):
            skipping = line.rstrip().endswith("\\")
            continue
        kept.append(line)
    rest = "\n".join(kept)
    rest = re.sub(r"^#(ifndef|endif).*RDMASIM_COMPAT_H.*$", "", rest,
                  flags=re.M)
    rest = re.sub(r"^// SPDX.*$", "", rest, flags=re.M)
    rest = re.sub(r"[ \t]+$", "", rest, flags=re.M)
    rest = re.sub(r"\n{3,}", "\n\n", rest).strip() + "\n"
    return ms, rest


def width(line):
    return len(line.expandtabs(8))


def wrap(line):
    """a line an expansion made longer than 100 columns, broken at its
    operators (" | ", ", "), the rest aligned after the parenthesis they
    are in"""
    if width(line) <= 100 or '"' in line:
        return line
    for op in (" | ", ", "):
        cut = line.rfind(op, 0, len(line) - (width(line) - 100) - 1)
        while cut > 0:
            opened = line.rfind("(", 0, cut)
            if opened < 0:
                break
            head = line[:cut + len(op)].rstrip()
            indent = width(line[:opened + 1])
            tail = "\t" * (indent // 8) + " " * (indent % 8) + \
                line[cut + len(op):].lstrip()
            if width(head) <= 100:
                return head + "\n" + wrap(tail)
            cut = line.rfind(op, 0, cut)
    return line


def tidy(text):
    """what removing and expanding left: long lines, blank runs, a
    declaration glued to a function"""
    text = "\n".join(wrap(line) for line in text.split("\n"))
    text = re.sub(r"\n{3,}", "\n\n", text)
    text = re.sub(r"\n}\n(?!EXPORT_|MODULE_|module_|late_initcall|[\n}#])",
                  "\n}\n\n", text)
    return text


def driver_text(path, text, defs, ms):
    text = unifdef(text, defs)
    text = text.replace("#include <rdmasim/rdmasim-abi.h>",
                        "#include <rdma/rdmasim-abi.h>")
    text = text.replace("#include <rdmasim/puda.h>", '#include "puda.h"')
    text = text.replace("#include <rdmasim/testing.h>",
                        '#include "testing.h"')
    text = text.replace("#include <rdmasim/compat.h>\n", "")
    # the local headers of one run together again
    text = re.sub(r'^(#include "[^"]+"\n)\n(?=#include ")', r"\1", text,
                  flags=re.M)
    text = text.replace("#include <rdmasim/kunit-mm.h>",
                        '#include "kunit-mm.h"')
    text = re.sub(r"^MODULE_VERSION\(RSIM_VERSION\);\n", "", text, flags=re.M)
    text = text.replace("RDMA_DRIVER_UNKNOWN", "RDMA_DRIVER_RDMASIM")
    # no parameters: rdmasim0's LID is the default base
    text = text.replace("rsim_param_base_lid()", "RSIM_DEFAULT_BASE_LID")
    left = re.search(r"rsim_param_\w+|rsim_modparams_\w+|RSIM_MODPARAMS|"
                     r"module_param\w*|MODULE_PARM_DESC", text)
    if left:
        raise SystemExit(f"{path}: the upstream form keeps {left.group(0)}")
    return tidy(expand(text, ms))


class Series:
    def __init__(self, ksrc, repo, touched):
        self.ksrc, self.repo = ksrc, repo
        shutil.rmtree(repo, ignore_errors=True)
        os.makedirs(repo)
        sh(["git", "init", "-q"], cwd=repo)
        for k, v in (("user.name", AUTHOR.split(" <")[0]),
                     ("user.email", AUTHOR.split("<")[1].rstrip(">"))):
            sh(["git", "config", k, v], cwd=repo)
        for t in touched:
            self.copy_in(os.path.join(ksrc, t), t)
        sh(["git", "add", "-A"], cwd=repo)
        sh(["git", "commit", "-q", "-m", "base: the kernel's own files"],
           cwd=repo)
        self.base = sh(["git", "rev-parse", "HEAD"], cwd=repo).strip()

    def copy_in(self, src, rel):
        dst = os.path.join(self.repo, rel)
        os.makedirs(os.path.dirname(dst), exist_ok=True)
        shutil.copyfile(src, dst)

    def write(self, rel, text):
        dst = os.path.join(self.repo, rel)
        os.makedirs(os.path.dirname(dst), exist_ok=True)
        with open(dst, "w") as f:
            f.write(text)

    def read(self, rel):
        with open(os.path.join(self.repo, rel)) as f:
            return f.read()

    def commit(self, subject, body):
        sh(["git", "add", "-A"], cwd=self.repo)
        sh(["git", "commit", "-q", "-s", "-m", subject + "\n\n" + body],
           cwd=self.repo)

    def format(self, out, cover):
        """the series into out, with a cover letter: cover is (subject,
        text), written where git format-patch leaves its placeholders"""
        shutil.rmtree(out, ignore_errors=True)
        os.makedirs(out)
        sh(["git", "format-patch", "-q", "--no-signature", "--cover-letter",
            "-o", out, self.base + "..HEAD"], cwd=self.repo)
        letter = os.path.join(out, "0000-cover-letter.patch")
        with open(letter) as f:
            text = f.read()
        if "*** SUBJECT HERE ***" not in text or "*** BLURB HERE ***" not in text:
            raise SystemExit("git format-patch wrote no cover letter template")
        text = text.replace("*** SUBJECT HERE ***", cover[0])
        text = text.replace("*** BLURB HERE ***", cover[1].rstrip("\n"))
        with open(letter, "w") as f:
            f.write(text)
        return sorted(os.listdir(out))


KCONFIG = """# SPDX-License-Identifier: GPL-2.0-only
config RDMA_SIM
	tristate "Simulated RDMA device (rdmasim)"
	depends on INFINIBAND && INFINIBAND_USER_ACCESS
	depends on INFINIBAND_VIRT_DMA
	select DMA_SHARED_BUFFER
	help
	  rdmasim registers software RDMA devices, rdmasim<N>, whose
	  allocation paths follow the RDMA core's contracts exactly: every
	  object is counted against an advertised limit, failures can be
	  injected at every allocation point (debugfs), and a loopback data
	  path checks every key, range, access right and PD. Devices are
	  made at run time through the platform driver's new_device file,
	  or bound to a netdev with "rdma link add ... type rdmasim".
	  It is meant for testing the RDMA core, ULPs and tools.

	  To compile it as a module, choose M here: the module is called
	  rdmasim.
"""

KCONFIG_KUNIT = """
config RDMA_SIM_KUNIT_TEST
	tristate "KUnit tests for rdmasim" if !KUNIT_ALL_TESTS
	depends on RDMA_SIM && KUNIT
	default KUNIT_ALL_TESTS
	help
	  rdmasim's KUnit suites, one per component of the driver: the
	  device and its limits, PDs, MRs and ib_map_mr_sg()'s rules, CQs,
	  QPs, fault injection, the PUDA pool, the loopback data path, the
	  management agents, the subnet and the fabric. They make devices
	  of their own and run when the module is loaded.

	  If unsure, say N.
"""

# The driver's patches: one concern each, in an order a reviewer reads
# them (definitions, the device, memory, queues, the data path, the
# management agents, RoCE, the fabric); the build is wired by the patch
# after them (DRIVER_WIRED). Every driver file is in exactly one.
DRIVER_PARTS = (
    ("RDMA/rdmasim: Add the driver's definitions",
     "rdmasim registers software RDMA devices whose allocation paths follow\n"
     "the RDMA core's documented contracts exactly, so that the core, ULPs\n"
     "and tools can be tested against them, error paths included: every\n"
     "object is counted against an advertised limit, a failure can be\n"
     "injected at every allocation point, ib_alloc_mr() and ib_map_mr_sg()\n"
     "keep their exact bounds, and a loopback data path checks every key,\n"
     "range, right and PD.\n\n"
     "This series adds it a concern per patch; the driver is built from\n"
     "the patch that adds its Kconfig and Makefile, after all of them.\n"
     "This one adds the private header: the device, its limits and\n"
     "objects, the locks and what each protects, the fabric's types, and\n"
     "the entry points KUnit tests use.",
     ["rdmasim.h", "fabric.h", "testing.h"]),
    ("RDMA/rdmasim: Add the device and its lifecycle",
     "Each device is a platform device bound to the platform driver\n"
     "\"rdmasim\", whose probe registers the ib_device. Devices are made and\n"
     "removed at run time, as netdevsim's are, through the driver's\n"
     "new_device and del_device files (\"ID [lid=N] [sa=0|1]\n"
     "[dma_pci=DDDD:BB:DD.F]\"); there are no module parameters and no\n"
     "device at load. The platform device is a real DMA device (64-bit mask,\n"
     "dma_parms), so the ULPs' and the core's mappings go through the DMA\n"
     "API and CONFIG_DMA_API_DEBUG audits them; dma_pci= lends a PCI\n"
     "function instead (QEMU's edu or pci-testdev), whose IOMMU domain the\n"
     "data path then translates through.\n\n"
     "Also here: the port and the device's attributes, debugfs (resources,\n"
     "limits, data path counters, the port's cable), fault injection (a\n"
     "fail_nth countdown per site, and fault_attr with\n"
     "CONFIG_FAULT_INJECTION), and where completion handlers and\n"
     "asynchronous events run: a verb runs only its own QP's and CQs'\n"
     "handlers; others run from the device's dispatcher.",
     ["main.c", "dev.c", "debugfs.c", "fault.c", "event.c", "dma_pci.c"]),
    ("RDMA/rdmasim: Add PDs, MRs, memory windows, DM and DMA handles",
     "User contexts, PDs and AHs; MRs (DMA, user, dma-buf, device memory,\n"
     "fast registration with IB_MR_TYPE_MEM_REG and IB_MR_TYPE_SG_GAPS),\n"
     "with ib_map_mr_sg()'s bound kept\n"
     "exactly: at most max_num_sg entries, the largest prefix that fits\n"
     "mapped and reported, page sizes validated, an entry whose end would\n"
     "wrap the address space ending the list, and a call that maps nothing\n"
     "leaving the MR as it was. Memory windows of type 1 and 2B, device\n"
     "memory, and DMA handles (TPH hints) with mlx5's rules.",
     ["pd.c", "mr.c", "mw.c", "dm.c", "dmah.c"]),
    ("RDMA/rdmasim: Add CQs, QPs and SRQs",
     "Completion queues; queue pairs of every type the core has (RC, UC,\n"
     "UD, XRC INI and TGT, QP0 and QP1) with the IBA state machine, posting\n"
     "and flushing; shared receive queues, basic and XRC, and XRC domains.\n"
     "Every capability is checked against the advertised limit to the\n"
     "unit; WRs may be posted from any context.",
     ["cq.c", "qp.c", "srq.c"]),
    ("RDMA/rdmasim: Add mapped queues and on-demand paging",
     "A user context may ask (rdmasim-abi.h) for rings it maps: CQ rings\n"
     "the kernel writes and the process polls, receive rings the process\n"
     "posts into, send rings with a doorbell only when the kernel is not\n"
     "already executing the queue. Everything the process writes there is\n"
     "copied before it is checked, as a command's data is; nonsense fails\n"
     "the queue, never touches another process's objects. The rings are\n"
     "rdma_user_mmap entries of the context. On-demand paging MRs use the\n"
     "core's ib_umem_odp, faulting pages with hmm_range_fault() when the\n"
     "data path needs them.",
     ["umap.c", "usq.c", "urq.c", "odp.c"]),
    ("RDMA/rdmasim: Add the loopback data path",
     "RC and UC QPs connected to a QP of the same subnet, and datagram QPs,\n"
     "execute their send WRs against registered memory: every access is\n"
     "checked (key and variant, MR state, PD, access rights, bounds) and\n"
     "every byte is copied page by page, as a DMA engine would. A small WR\n"
     "completes before post_send returns; past a budget, in hard-IRQ\n"
     "context or from a completion handler, the queue goes to a worker.\n"
     "RNR waits, atomics, fencing, invalidation and fast registration\n"
     "work requests follow the IBA.",
     ["dp.c"]),
    ("RDMA/rdmasim: Add the PUDA buffer pool",
     "An irdma-style pool of DMA-mapped buffers, exported for other drivers:\n"
     "buffers are allocated and mapped once, when the pool grows, and moved\n"
     "between lists by get and put, through per-CPU caches. rdmasim's MAD\n"
     "receive buffers come from it.",
     ["puda.h", "puda.c"]),
    ("RDMA/rdmasim: Add the SMA, the PMA and the subnet",
     "An InfiniBand port answers the MADs of its subnet management agent\n"
     "and performance management agent in process_mad, with a MAD status\n"
     "for what it cannot serve, never silence. Every InfiniBand-mode device\n"
     "is a port of one subnet: each has a LID of its own, packets are\n"
     "routed by destination LID, and the built-in subnet managers elect a\n"
     "master as IBA 14.4.1 does.",
     ["mad.c", "subnet.c"]),
    ("RDMA/rdmasim: Add the subnet administrator and multicast",
     "The master's port answers the SA class on QP1 (NodeRecord,\n"
     "PortInfoRecord, PathRecord and MCMemberRecord, with RMPP\n"
     "for tables), so that the core's SA client, IPoIB and rdma_cm work\n"
     "without an external SM. The SA keeps the subnet's multicast groups;\n"
     "UD QPs attach to them and a datagram to a multicast LID reaches every\n"
     "attached QP. Each shared resource is bounded, per requester where a\n"
     "requester could exhaust it.",
     ["sa.c", "sa_agent.c", "mcast.c", "mcast_dp.c"]),
    ("RDMA/rdmasim: Add RoCE mode",
     "A device bound to a netdev the way rxe and siw attach (\"rdma link add\n"
     "NAME type rdmasim netdev DEV\"): RoCE v2, the core's GID table, the\n"
     "port following the netdev's carrier, packets routed by destination\n"
     "GID to the device the sender reaches as the network would, across\n"
     "network namespaces only where a link joins them.",
     ["roce.c"]),
    ("RDMA/rdmasim: Add switches and links",
     "A simulated InfiniBand fabric: switches with their SMA and PMA, and\n"
     "links between any two ports, made and cut at run time through\n"
     "debugfs. With the built-in SM switched off, opensm sweeps it over\n"
     "umad and issm; LID-routed packets follow the switches' forwarding\n"
     "tables, directed-route SMPs go hop by hop, and a link that goes or\n"
     "comes raises trap 128.",
     ["fabric.c", "switch.c"]),
)

DRIVER_WIRED = (
    "The build: CONFIG_RDMA_SIM, the driver's Makefile and its place in\n"
    "drivers/infiniband/. Everything the previous patches added is built\n"
    "from here on.")

# The KUnit suites' patches: the first adds the module, each later one
# its suites and their objects (every commit builds them). Every file of
# kunit/ (and kunit-mm.h) is in exactly one; suites that use dp_helpers
# come after the patch that adds it.
KUNIT_PARTS = (
    ("RDMA/rdmasim: Add KUnit suites for the device, PDs and MRs",
     "rdmasim_kunit.ko: loading the module runs the suites. Their helpers\n"
     "make devices of their own (with small limits where a test needs\n"
     "them) and a shared one. The first suites: the device and its\n"
     "limits, PDs, MRs, ib_map_mr_sg()'s rules, fault injection.",
     ["kunit_main.c", "helpers.c", "helpers.h", "kunit-mm.h",
      "dev_kunit.c", "pd_kunit.c", "mr_kunit.c", "map_kunit.c",
      "fault_kunit.c"]),
    ("RDMA/rdmasim: Add KUnit suites for the data path",
     "Helpers that connect QPs and move data between registered buffers,\n"
     "and the data path's suite: every check of a remote access, each\n"
     "failure's completion status, the bytes that arrive.",
     ["dp_helpers.c", "dp_helpers.h", "dp_kunit.c"]),
    ("RDMA/rdmasim: Add KUnit suites for the queues",
     "CQs, QPs, SRQs, mapped send queues, memory windows and UD.",
     ["cq_kunit.c", "qp_kunit.c", "srq_kunit.c", "usq_kunit.c",
      "mw_kunit.c", "ud_kunit.c"]),
    ("RDMA/rdmasim: Add KUnit suites for the engine",
     "Who executes a send queue and when: budgets, workers, contexts;\n"
     "atomics, DMA handles with and without traffic, and a stress suite\n"
     "of many QPs at once.",
     ["engine_kunit.c", "atomic_kunit.c", "dmah_kunit.c",
      "dmah_dp_kunit.c", "stress_kunit.c"]),
    ("RDMA/rdmasim: Add KUnit suites for the PUDA pool and the agents",
     "The PUDA pool, the SMA and PMA, and where completion handlers run.",
     ["puda_kunit.c", "mad_kunit.c", "placement_kunit.c"]),
    ("RDMA/rdmasim: Add KUnit suites for malformed MADs, the subnet and RoCE",
     "Every MAD the agents refuse and the status they answer it with; the\n"
     "subnet's election and routing; RoCE mode.",
     ["madcheck_kunit.c", "subnet_kunit.c", "roce_kunit.c"]),
    ("RDMA/rdmasim: Add KUnit suites for the SA, multicast and the fabric",
     "The subnet administrator's records, multicast groups and their data\n"
     "path, and the fabric: control errnos, the switch SMA and PMA, LID and\n"
     "directed routing, multicast forwarding, traps.",
     ["sa_kunit.c", "mcast_kunit.c", "fabric_kunit.c"]),
)

MAINTAINERS_ENTRY = """SIMULATED RDMA DEVICE (rdmasim)
M:	rdmasim developers <rdmasim@example.org>
L:	linux-rdma@vger.kernel.org
S:	Maintained
F:	include/uapi/rdma/rdmasim-abi.h

"""


def maintain(s, path):
    """the patch that adds path lists it in rdmasim's MAINTAINERS entry
    (files in order, as the entries keep them)"""
    mnt = s.read("MAINTAINERS")
    start = mnt.index("SIMULATED RDMA DEVICE (rdmasim)\n")
    end = mnt.index("\n\n", start)
    entry = mnt[start:end].split("\n")
    files = sorted([line for line in entry if line.startswith("F:")] +
                   [f"F:\t{path}"])
    entry = [line for line in entry if not line.startswith("F:")] + files
    s.write("MAINTAINERS", mnt[:start] + "\n".join(entry) + mnt[end:])


def kbuild_objects():
    with open(os.path.join(TOP, DRV, "Kbuild")) as f:
        kb = f.read()
    objs = re.search(r"rdmasim-y := (.*)", kb).group(1).split()
    return objs


def build(ksrc, out):
    defs = probes(ksrc)
    ms, helpers = compat_parts(ksrc, defs)
    wrappers, helpers, odp_helpers = sort_helpers(helpers)
    ms = ms + wrappers
    touched = ["include/uapi/rdma/ib_user_ioctl_verbs.h", "MAINTAINERS",
               "drivers/infiniband/Kconfig",
               "drivers/infiniband/sw/Makefile",
               "Documentation/infiniband/index.rst",
               "tools/testing/selftests/rdma/Makefile",
               "tools/testing/selftests/rdma/config"]
    s = Series(ksrc, os.path.join(out, "scratch"), touched)

    # 1: the driver id
    s.write(touched[0], with_driver_id(s.read(touched[0])))
    s.commit("RDMA/core: Add RDMA_DRIVER_RDMASIM",
             "rdmasim, a simulated RDMA device, registers with its own driver\n"
             "id, so that its libibverbs provider (providers/rdmasim in\n"
             "rdma-core) matches it.")

    # 2: the uAPI header and the MAINTAINERS entry
    s.write("include/uapi/rdma/rdmasim-abi.h",
            uapi_abi("rdma-core's providers/rdmasim"))
    mnt = s.read("MAINTAINERS")
    anchor = "SOFT-IWARP DRIVER (siw)\n"
    mnt = mnt.replace(anchor, MAINTAINERS_ENTRY + anchor, 1)
    s.write("MAINTAINERS", mnt)
    s.commit("RDMA/rdmasim: Add the uAPI header",
             "What the rdmasim driver and its libibverbs provider agree on\n"
             "beyond the core's uverbs ABI: the mapped queues' rings and\n"
             "their doorbells, the responses that name them. Dual-licensed,\n"
             "as rdma-core's copy of it must be.")

    # 3: the driver, one concern per patch (DRIVER_PARTS), built once the
    # last of them adds its Kconfig and Makefile: every commit builds
    srcs = {}
    skip = {"modparams.c", "Kbuild"}
    for name in sorted(os.listdir(os.path.join(TOP, DRV))):
        if name not in skip and name.endswith((".c", ".h")):
            srcs[name] = os.path.join(DRV, name)
    for name in ("puda.h", "testing.h"):
        srcs[name] = os.path.join("include/rdmasim", name)
    parted = [f for _, _, files in DRIVER_PARTS for f in files]
    if sorted(parted) != sorted(srcs) or len(set(parted)) != len(parted):
        raise SystemExit("DRIVER_PARTS must name each driver file once: "
                         f"missing {sorted(set(srcs) - set(parted))}, "
                         f"unknown {sorted(set(parted) - set(srcs))}")
    for i, (subject, body, files) in enumerate(DRIVER_PARTS):
        for name in files:
            with open(os.path.join(TOP, srcs[name])) as f:
                text = driver_text(name, f.read(), defs, ms)
            if name == "odp.c":
                text = with_local_helpers(text, odp_helpers)
            if name == "rdmasim.h":
                text = with_local_helpers(text, helpers, inline=True)
            s.write(f"{DRV}/{name}", text)
        if i == 0:
            maintain(s, f"{DRV}/*")
        s.commit(subject, body)

    objs = [o for o in kbuild_objects() if o != "modparams.o"]
    mk = ("# SPDX-License-Identifier: GPL-2.0-only\n"
          "obj-$(CONFIG_RDMA_SIM) += rdmasim.o\n\n"
          "rdmasim-y := " + " \\\n\t".join(
              " ".join(objs[i:i + 6]) for i in range(0, len(objs), 6)) +
          " \\\n\tdmah.o\n"
          "rdmasim-$(CONFIG_INFINIBAND_ON_DEMAND_PAGING) += odp.o\n")
    s.write(f"{DRV}/Makefile", mk)
    s.write(f"{DRV}/Kconfig", KCONFIG)
    kc = s.read("drivers/infiniband/Kconfig")
    kc = kc.replace('source "drivers/infiniband/sw/siw/Kconfig"\n',
                    'source "drivers/infiniband/sw/siw/Kconfig"\n'
                    'source "drivers/infiniband/sw/rdmasim/Kconfig"\n')
    s.write("drivers/infiniband/Kconfig", kc)
    swmk = s.read("drivers/infiniband/sw/Makefile")
    swmk = swmk.replace("obj-$(CONFIG_RDMA_SIW)\t\t\t+= siw/\n",
                        "obj-$(CONFIG_RDMA_SIW)\t\t\t+= siw/\n"
                        "obj-$(CONFIG_RDMA_SIM)\t\t\t+= rdmasim/\n")
    s.write("drivers/infiniband/sw/Makefile", swmk)
    s.commit("RDMA/rdmasim: Add Kconfig and Makefile", DRIVER_WIRED)

    # 4: the KUnit suites, where the kernel keeps a driver's, a group per
    # patch; the first adds the module, each later one its objects to it,
    # so that every commit builds them
    kunit = os.path.join(TOP, "kunit")
    with open(os.path.join(kunit, "Kbuild")) as f:
        kb = f.read()
    kobjs = re.search(r"rdmasim_kunit-y := (.*?)\n\n", kb, re.S).group(1)
    kobjs = kobjs.replace("\\\n", " ").split()
    ksrcs = sorted(n for n in os.listdir(kunit) if n.endswith((".c", ".h")))
    ksrcs.append("kunit-mm.h")
    parted = [f for _, _, files in KUNIT_PARTS for f in files]
    if sorted(parted) != sorted(ksrcs) or len(set(parted)) != len(parted):
        raise SystemExit("KUNIT_PARTS must name each KUnit file once: "
                         f"missing {sorted(set(ksrcs) - set(parted))}, "
                         f"unknown {sorted(set(parted) - set(ksrcs))}")
    built = []
    for i, (subject, body, files) in enumerate(KUNIT_PARTS):
        for name in files:
            src = os.path.join(kunit, name) if name != "kunit-mm.h" else \
                os.path.join(TOP, "include/rdmasim/kunit-mm.h")
            with open(src) as f:
                s.write(f"{DRV}/tests/{name}",
                        driver_text(name, f.read(), defs, ms))
        # the module's objects in Kbuild's order, as far as they have come
        built += [n[:-2] + ".o" for n in files if n.endswith(".c")]
        order = [o for o in kobjs if o in built]
        s.write(f"{DRV}/tests/Makefile",
                "# SPDX-License-Identifier: GPL-2.0-only\n"
                "obj-$(CONFIG_RDMA_SIM_KUNIT_TEST) += rdmasim_kunit.o\n\n"
                "ccflags-y += -I$(src)/..\n\n"
                "rdmasim_kunit-y := \\\n" +
                " \\\n".join("\t" + o for o in order) + "\n")
        if i == 0:
            kc = s.read(f"{DRV}/Kconfig")
            s.write(f"{DRV}/Kconfig", kc + KCONFIG_KUNIT)
            mk = s.read(f"{DRV}/Makefile")
            s.write(f"{DRV}/Makefile",
                    mk + "\nobj-$(CONFIG_RDMA_SIM_KUNIT_TEST) += tests/\n")
            maintain(s, f"{DRV}/tests/")
        s.commit(subject, body)
    if sorted(built) != sorted(kobjs):
        raise SystemExit("the KUnit module's objects and Kbuild's differ")

    # 5: the kselftest, in the kernel's tools/testing/selftests/rdma/
    kst = "tools/testing/selftests/rdma"
    with open(os.path.join(TOP, "tools/selftests/rdma/rdmasim_new_device.sh")) as f:
        text = re.sub(r"^# shellcheck .*\n", "", f.read(), flags=re.M)
        s.write(f"{kst}/rdmasim_new_device.sh", text)
    os.chmod(os.path.join(s.repo, kst, "rdmasim_new_device.sh"), 0o755)
    kmk = s.read(f"{kst}/Makefile")
    kmk = kmk.replace("\t\trxe_netns_names.sh\n",
                      "\t\trxe_netns_names.sh \\\n\t\trdmasim_new_device.sh\n")
    s.write(f"{kst}/Makefile", kmk)
    kcfg = s.read(f"{kst}/config")
    if "CONFIG_RDMA_SIM" not in kcfg:
        s.write(f"{kst}/config", kcfg.rstrip("\n") + "\nCONFIG_RDMA_SIM\n")
    maintain(s, f"{kst}/rdmasim*")
    s.commit("selftests/rdma: Add rdmasim's new_device test",
             "Devices made and removed through rdmasim's new_device and\n"
             "del_device files, with their attributes, and the refusals of a\n"
             "taken number, an unknown attribute and bad values. It skips\n"
             "without root or without the rdmasim module.")

    # 6: the documentation
    with open(os.path.join(TOP, "Documentation/overview.rst")) as f:
        doc = f.read()
    doc = ".. SPDX-License-Identifier: GPL-2.0\n\n" + doc.replace(
        "rdmasim at a glance\n", "rdmasim: a simulated RDMA device\n").replace(
        "===================\nrdmasim",
        "================================\nrdmasim").replace(
        "rdmasim at a glance", "rdmasim: a simulated RDMA device")
    doc = re.sub(r"^=+\nrdmasim: a simulated RDMA device\n=+\n",
                 "================================\n"
                 "rdmasim: a simulated RDMA device\n"
                 "================================\n", doc, flags=re.M)
    s.write("Documentation/infiniband/rdmasim.rst", doc)
    idx = s.read("Documentation/infiniband/index.rst")
    idx = idx.replace("   ipoib\n", "   ipoib\n   rdmasim\n")
    s.write("Documentation/infiniband/index.rst", idx)
    maintain(s, "Documentation/infiniband/rdmasim.rst")
    s.commit("Documentation: infiniband: Document rdmasim",
             "What the simulated RDMA device does and how to make one.")
    return s.format(os.path.join(out, "kernel"), kernel_cover())


RDMA_CORE_MAINTAINERS = """RDMASIM USERSPACE PROVIDER (for rdmasim.ko)
M:	rdmasim developers <rdmasim@example.org>
S:	Supported
F:	providers/rdmasim/

"""

PROVIDER_HEAD = """// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * The libibverbs provider of rdmasim, the simulated RDMA device
 * (rdmasim.ko, RDMA_DRIVER_RDMASIM). Everything goes through the generic
 * ibv_cmd_* command layer to the kernel's uverbs: context, device and
 * port query, PDs, MRs (plain, extended with a DMA handle, dma-buf) and
 * DMA handles, AHs, CQs and QPs with the kernel's post commands. CQs are
 * polled from a ring the kernel writes and the process maps, and receive
 * WRs (of QPs and SRQs) are posted into a ring the kernel reads (the
 * context asks for both: rdmasim-abi.h), without a system call but for
 * the doorbell the kernel asks for in the ring; send WRs go into a ring
 * too, with a doorbell only when the ring asks for one (the kernel is not
 * executing the queue). RSIM_NO_MAP=1 in the environment, or a kernel
 * that does not grant it, keeps the kernel's poll and post commands;
 * RSIM_RING_ALWAYS=1 rings the send doorbell after every post.
 *
 * The ioctl commands carry the driver id the kernel reports, which it
 * checks: RDMA_DRIVER_RDMASIM, or RDMA_DRIVER_UNKNOWN from an rdmasim
 * built out of tree, so that one provider works with either.
 */
"""

MATCH = """/*
 * By driver id; by name or by the parent's modalias (the platform device
 * rdmasim.<N> or rdmasim.<N>.auto) on kernels whose rdmasim reports
 * RDMA_DRIVER_UNKNOWN, which match_driver_id() skips.
 */
static const struct verbs_match_ent rsim_match_table[] = {
	VERBS_DRIVER_ID(RDMA_DRIVER_RDMASIM),
	VERBS_NAME_MATCH("rdmasim", NULL),
	/* any name ("rdma link add" names RoCE-mode devices): the parent */
	VERBS_MODALIAS_MATCH("platform:rdmasim", NULL),
	{},
};
"""


PACKAGING = (
    ("README.md", " - siw.ko\n", " - rdmasim.ko\n"),
    ("debian/control",
     "  - rxe: A software implementation of the RoCE protocol\n",
     "  - rdmasim: A simulated RDMA device, for testing the RDMA stack\n"),
    ("debian/copyright", "Files: providers/rxe/*\n",
     "Files: providers/rdmasim/*\n"
     "Copyright: 2025-2026, rdmasim developers.\n"
     "License: BSD-2-clause or GPL-2\n\n"),
    ("redhat/rdma-core.spec",
     "- librxe: A software implementation of the RoCE protocol\n",
     "- librdmasim: A simulated RDMA device, for testing the RDMA stack\n"),
    ("suse/rdma-core.spec",
     "- librxe: A software implementation of the RoCE protocol\n",
     "- librdmasim: A simulated RDMA device, for testing the RDMA stack\n"),
)


def with_driver_id(text):
    """enum rdma_driver_id with RDMA_DRIVER_RDMASIM (the kernel's uAPI
    header, and rdma-core's copy of it)"""
    return text.replace("\tRDMA_DRIVER_IONIC,\n",
                        "\tRDMA_DRIVER_IONIC,\n\tRDMA_DRIVER_RDMASIM,\n")


def uapi_abi(provider):
    """include/rdmasim/rdmasim-abi.h as the uAPI header, for a provider
    that lives at <provider>"""
    with open(os.path.join(TOP, "include/rdmasim/rdmasim-abi.h")) as f:
        abi = f.read()
    return abi.replace("(tools/provider)", f"({provider})")


def build_rdma_core(rsrc, out):
    """the rdma-core series: the kernel headers, then the provider"""
    touched = ["kernel-headers/rdma/ib_user_ioctl_verbs.h",
               "kernel-headers/CMakeLists.txt", "CMakeLists.txt",
               "MAINTAINERS", "tests/CMakeLists.txt", "README.md",
               "debian/control", "debian/copyright", "redhat/rdma-core.spec",
               "suse/rdma-core.spec"]
    s = Series(rsrc, os.path.join(out, "scratch-rdma-core"), touched)
    s.write(touched[0], with_driver_id(s.read(touched[0])))
    s.write("kernel-headers/rdma/rdmasim-abi.h",
            uapi_abi("providers/rdmasim"))
    kh = s.read(touched[1])
    kh = kh.replace("  rdma/rdma_user_rxe.h\n  rdma/rvt-abi.h\n",
                    "  rdma/rdma_user_rxe.h\n  rdma/rdmasim-abi.h\n"
                    "  rdma/rvt-abi.h\n", 1)
    s.write(touched[1], kh)
    s.commit("Update kernel headers",
             "To the kernel series that adds rdmasim: RDMA_DRIVER_RDMASIM and\n"
             "include/uapi/rdma/rdmasim-abi.h.")

    with open(os.path.join(TOP, "tools/provider/rdmasim.c")) as f:
        src = f.read()
    src = PROVIDER_HEAD + src[src.index("\n */\n") + 4:]
    src = src.replace("#include <rdmasim/rdmasim-abi.h>",
                      "#include <rdma/rdmasim-abi.h>")
    start = src.index("/*\n * By name, or by the parent's modalias")
    end = src.index("};\n", start) + 3
    src = src[:start] + MATCH + src[end:]
    s.write("providers/rdmasim/rdmasim.c", src)
    s.write("providers/rdmasim/CMakeLists.txt",
            "rdma_provider(rdmasim\n  rdmasim.c\n)\n")
    top = s.read("CMakeLists.txt")
    top = top.replace("add_subdirectory(providers/siw)\n",
                      "add_subdirectory(providers/siw)\n"
                      "add_subdirectory(providers/rdmasim)\n", 1)
    s.write("CMakeLists.txt", top)
    mnt = s.read("MAINTAINERS")
    mnt = mnt.replace("RXE SOFT ROCEE USERSPACE PROVIDER",
                      RDMA_CORE_MAINTAINERS + "RXE SOFT ROCEE USERSPACE PROVIDER",
                      1)
    s.write("MAINTAINERS", mnt)
    # the distributions' packaging: the provider's library is packaged by
    # their wildcards already; its line in each list of providers, and
    # its licence in Debian's copyright
    for rel, old, new in PACKAGING:
        text = s.read(rel)
        if old not in text:
            raise SystemExit(f"rdma-core: no '{old.strip()}' in {rel}")
        s.write(rel, text.replace(old, new + old, 1))
    s.commit("providers/rdmasim: Add a provider for rdmasim",
             "rdmasim (drivers/infiniband/sw/rdmasim) is a simulated RDMA\n"
             "device for testing the RDMA stack. Its provider maps the CQ,\n"
             "receive and send rings the kernel offers (rdmasim-abi.h), so\n"
             "that polls and posts need no system call, and goes through the\n"
             "command layer for everything else: contexts, PDs, MRs and DMA\n"
             "handles, AHs, CQs, QPs (RC, UC, UD, XRC), SRQs, memory windows,\n"
             "ODP. It matches the device by driver id, and by name or parent\n"
             "on kernels whose rdmasim reports none. The distributions' lists\n"
             "of providers name it; their wildcards package it.")

    # 3: pyverbs tests of what is rdmasim's own
    with open(os.path.join(TOP, "tools/provider/tests/test_rdmasim.py")) as f:
        s.write("tests/test_rdmasim.py", f.read())
    tl = s.read(touched[4])
    tl = tl.replace("  test_rdmacm.py\n", "  test_rdmacm.py\n  test_rdmasim.py\n", 1)
    s.write(touched[4], tl)
    mnt = s.read("MAINTAINERS")
    mnt = mnt.replace("F:\tproviders/rdmasim/\n",
                      "F:\tproviders/rdmasim/\nF:\ttests/test_rdmasim.py\n", 1)
    s.write("MAINTAINERS", mnt)
    s.commit("tests: Add rdmasim tests",
             "What is rdmasim's own, on an rdmasim device (the others skip):\n"
             "the limits a default device advertises, each enforced to the unit\n"
             "(a CQ of max_cqe entries and QP capabilities at their limits are\n"
             "granted, one more is EINVAL), and the provider's mapped CQ,\n"
             "receive and send rings wrapping many times on queues of four\n"
             "entries, with the rings, through the kernel's post and poll\n"
             "commands (RSIM_NO_MAP=1) and with a doorbell on every post\n"
             "(RSIM_RING_ALWAYS=1); inline data up to max_inline_data arrives\n"
             "whole, one byte more is EINVAL at the post.")
    return s.format(os.path.join(out, "rdma-core"), RDMA_CORE_COVER)


def kernel_cover():
    """the kernel series' cover letter: what rdmasim is, for whom, what it
    offers that rxe and siw do not, how it is organised and tested"""
    suites = 0
    kunit = os.path.join(TOP, "kunit")
    for name in os.listdir(kunit):
        if name.endswith(".c"):
            with open(os.path.join(kunit, name)) as f:
                suites += f.read().count("\nkunit_test_suite(")
    first = 3
    wired = first + len(DRIVER_PARTS)
    klast = wired + len(KUNIT_PARTS)
    text = f"""\
rdmasim registers software RDMA devices whose allocation paths follow
the RDMA core's documented contracts exactly. It is for those who develop
the RDMA core, the ULPs and the tools and want to run their code, error
paths included, without hardware: what netdevsim is for networking.

What it offers beside rxe and siw:

- Exact limits: every object is counted against the limit the device
  advertises and refused past it with a precise errno; ib_alloc_mr() and
  ib_map_mr_sg() keep their bounds to the entry. debugfs shows each
  object type's count, high-water mark and refusals.
- Fault injection at every allocation point: a fail_nth countdown per
  site (and fault_attr), so that a test can fail each allocation of a
  ULP's setup in turn.
- A real DMA device: the platform device, or a PCI function lent with
  new_device's dma_pci= (QEMU's edu), behind an IOMMU where there is
  one, so that CONFIG_DMA_API_DEBUG audits the ULPs' mappings and the
  data path reads through the IOMMU's tables. rxe and siw use virtual
  DMA.
- A loopback data path that checks every key, range, right and PD.
- An InfiniBand port with an SMA, a PMA, a built-in SM and SA: IPoIB,
  SRP and rdma_cm run over InfiniBand without hardware; and switches and
  links that an unmodified opensm sweeps.
- RoCE mode, "rdma link add NAME type rdmasim netdev DEV", as rxe and siw
  attach.
- Mapped CQ, receive and send rings for userspace; the rdma-core series
  adds the provider and its pyverbs tests.

There are no module parameters:

  modprobe rdmasim
  echo "0 lid=1" > /sys/bus/platform/drivers/rdmasim/new_device
  rdma link add rsim0 type rdmasim netdev veth0

The series: patch 1 adds RDMA_DRIVER_RDMASIM and patch 2 the uAPI
header; patches {first} to {wired - 1} add the driver a concern at a time
(definitions, the device, memory, queues, mapped queues and ODP, the
data path, the PUDA pool, the SMA/PMA and subnet, the SA and multicast,
RoCE, the fabric), each under 100 KB; patch {wired} adds its Kconfig and
Makefile, so that every commit builds. Patches {wired + 1} to {klast} add
{suites} KUnit suites (CONFIG_RDMA_SIM_KUNIT_TEST), each patch building
with its suites; then a kselftest for new_device and the documentation.

Tested: every patch applied in turn to 7.3 and built (W=1, sparse),
checkpatch --strict; the whole booted in a UML kernel with KASAN,
kmemleak, lockdep, DMA_API_DEBUG and list debugging: every KUnit suite,
a device-agnostic conformance suite on an InfiniBand pair and a RoCE
device, rdma-core's pyverbs tests with the provider, and the kselftest,
with no report in the log. Out of tree, the same driver runs blktests'
nvme and srp groups, rdma-core's tests and perftest.
"""
    return ("RDMA: Add rdmasim, a simulated RDMA device for testing", text)


RDMA_CORE_COVER = ("providers/rdmasim: Add the rdmasim provider", """\
The userspace side of rdmasim, the simulated RDMA device the kernel
series adds (drivers/infiniband/sw/rdmasim): the kernel headers, the
provider, and pyverbs tests of what is rdmasim's own. The provider maps
the CQ, receive and send rings the kernel offers, so that polls and
posts need no system call, and uses the command layer for everything
else. The series builds with -DIOCTL_MODE=both -DENABLE_WERROR=1; its
tests pass on an InfiniBand-mode and a RoCE-mode rdmasim device, and skip
on any other.
""")


WRAPPER = re.compile(r"^static inline [^\n(]*?\b(\w+)\(([^)]*)\)\n\{\n"
                     r"\t(?:return )?([^;\n]*(?:\n\t\t[^;\n]*)*);\n\}\n", re.M)


def sort_helpers(helpers):
    """what compat.h leaves for the target kernel, sorted: wrappers whose
    body is one call (expanded in the code, as the macros are), the ODP
    helpers (odp.c's own, CONFIG_INFINIBAND_ON_DEMAND_PAGING's block), and
    the rest for the driver's header, without forward declarations
    nothing there uses"""
    wrappers = []
    for m in WRAPPER.finditer(helpers):
        params = [re.findall(r"\w+", p)[-1] for p in m.group(2).split(",")
                  if p.strip() and p.strip() != "void"]
        wrappers.append((m.group(1), params, " ".join(m.group(3).split())))
    rest = WRAPPER.sub("", helpers)
    odp = ""
    head = "#if IS_ENABLED(CONFIG_INFINIBAND_ON_DEMAND_PAGING)\n"
    start = rest.find(head)
    if start >= 0:
        # to its own #endif: conditionals nest inside it
        depth, pos = 0, start
        for m in re.finditer(r"^#(if|ifdef|ifndef|endif)\b.*\n", rest[start:],
                             re.M):
            depth += -1 if m.group(1) == "endif" else 1
            if depth == 0:
                pos = start + m.end()
                break
        odp = rest[start + len(head):pos - len("#endif\n")]
        rest = rest[:start] + rest[pos:]
    for m in re.finditer(r"^struct (\w+);\n", rest, re.M):
        if rest.count(f"struct {m.group(1)}") == 1:
            rest = rest.replace(m.group(0), "", 1)
    rest = rest.replace("\nvoid rsim_dmah_bind(", "\n/* dmah.c */\nvoid rsim_dmah_bind(")
    rest = re.sub(r"\n{3,}", "\n\n", rest)
    return wrappers, rest, odp


def with_local_helpers(text, helpers, inline=False):
    """helpers (includes, then declarations and functions) made a file's
    own: their system includes joined to the file's first block of them,
    in order, and the rest after the file's first run of includes; a .c
    file's functions lose their inline"""
    if not helpers.strip():
        return text
    incs = [line for line in helpers.splitlines()
            if line.startswith("#include <") and not line.startswith("#include <rdmasim/")]
    body = "\n".join(line for line in helpers.splitlines()
                     if not line.startswith("#include")).strip()
    if not inline:
        body = body.replace("static inline ", "static ")
    lines = text.split("\n")
    first = next(i for i, line in enumerate(lines) if line.startswith("#include <"))
    last = first
    while lines[last + 1].startswith("#include <"):
        last += 1
    lines[first:last + 1] = sorted(set(lines[first:last + 1]) | set(incs))
    # the end of the first run of includes (blank lines between allowed)
    end = first
    for i in range(first, len(lines)):
        if lines[i].startswith("#include"):
            end = i
        elif lines[i].strip():
            break
    lines[end + 1:end + 1] = ["", body]
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--ksrc", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--rdma-core", help="rdma-core's source: its series too")
    args = ap.parse_args()
    for p in build(os.path.abspath(args.ksrc), os.path.abspath(args.out)):
        print("kernel/" + p)
    if args.rdma_core:
        for p in build_rdma_core(os.path.abspath(args.rdma_core),
                                 os.path.abspath(args.out)):
            print("rdma-core/" + p)
    return 0


if __name__ == "__main__":
    sys.exit(main())
