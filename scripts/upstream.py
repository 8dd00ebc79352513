#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""make upstream: rdmasim as a kernel patch series, made from this tree.

  upstream.py --ksrc DIR --out DIR [--rdma-core DIR]

Writes DIR/kernel/NNNN-*.patch, a series for the kernel source in --ksrc
(Debian's 7.3): the RDMA_DRIVER_RDMASIM id, the uAPI header
(include/uapi/rdma/rdmasim-abi.h) with the MAINTAINERS entry, the driver
in drivers/infiniband/sw/rdmasim/ with its Kconfig and Makefile hooks,
and its documentation. The out-of-tree tree stays the source of truth;
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
MAINTAINERS entry. scripts/upstream-check.sh applies both, runs
checkpatch --strict on the kernel's and builds both.
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
    text = text.replace("#include <rdmasim/kunit-mm.h>",
                        '#include "kunit-mm.h"')
    text = re.sub(r"^MODULE_VERSION\(RSIM_VERSION\);\n", "", text, flags=re.M)
    text = text.replace("RDMA_DRIVER_UNKNOWN", "RDMA_DRIVER_RDMASIM")
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

    def format(self, out):
        shutil.rmtree(out, ignore_errors=True)
        os.makedirs(out)
        sh(["git", "format-patch", "-q", "--no-signature", "-o", out,
            self.base + "..HEAD"], cwd=self.repo)
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

    # 3: the driver, its Kconfig and Makefile
    skip = {"modparams.c", "Kbuild"}
    for name in sorted(os.listdir(os.path.join(TOP, DRV))):
        if name in skip or not name.endswith((".c", ".h")):
            continue
        with open(os.path.join(TOP, DRV, name)) as f:
            text = driver_text(name, f.read(), defs, ms)
        if name == "rdmasim.h":
            text = text.replace('#include "puda.h"\n', '#include "puda.h"\n\n'
                                + helpers_body(helpers) + "\n", 1)
        s.write(f"{DRV}/{name}", text)
    for name, src in (("puda.h", "include/rdmasim/puda.h"),
                      ("testing.h", "include/rdmasim/testing.h")):
        with open(os.path.join(TOP, src)) as f:
            s.write(f"{DRV}/{name}", driver_text(name, f.read(), defs, ms))
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
    maintain(s, f"{DRV}/*")
    s.commit("RDMA/rdmasim: Add a simulated RDMA device",
             "rdmasim registers software RDMA devices whose allocation paths\n"
             "follow the RDMA core's documented contracts exactly, so that the\n"
             "core, ULPs and tools can be tested against them, error paths\n"
             "included: every object is counted against an advertised limit,\n"
             "a failure can be injected at every allocation point (debugfs),\n"
             "ib_alloc_mr() and ib_map_mr_sg() keep their exact bounds, and a\n"
             "loopback data path checks every key, range, right and PD.\n\n"
             "Devices are made at run time, as netdevsim's are, through the\n"
             "platform driver's new_device file (\"ID [lid=N] [sa=0|1]\n"
             "[dma_pci=DDDD:BB:DD.F]\": a LID, a silent SA, a PCI function to\n"
             "map through, behind an IOMMU where there is one), or bound to a\n"
             "netdev with \"rdma link add NAME type rdmasim netdev DEV\" (RoCE\n"
             "v2, as rxe and siw attach). An InfiniBand port has an SMA, a PMA\n"
             "and a built-in SM and SA, or a fabric of simulated switches that\n"
             "opensm sweeps. There are no module parameters.")

    # 4: the KUnit suites, where the kernel keeps a driver's
    kunit = os.path.join(TOP, "kunit")
    for name in sorted(os.listdir(kunit)):
        if not name.endswith((".c", ".h")):
            continue
        with open(os.path.join(kunit, name)) as f:
            s.write(f"{DRV}/tests/{name}",
                    driver_text(name, f.read(), defs, ms))
    with open(os.path.join(TOP, "include/rdmasim/kunit-mm.h")) as f:
        s.write(f"{DRV}/tests/kunit-mm.h",
                driver_text("kunit-mm.h", f.read(), defs, ms))
    with open(os.path.join(kunit, "Kbuild")) as f:
        kb = f.read()
    objs = re.search(r"rdmasim_kunit-y := (.*?)\n\n", kb, re.S).group(1)
    objs = objs.replace("\\\n", " ").split()
    s.write(f"{DRV}/tests/Makefile",
            "# SPDX-License-Identifier: GPL-2.0-only\n"
            "obj-$(CONFIG_RDMA_SIM_KUNIT_TEST) += rdmasim_kunit.o\n\n"
            "rdmasim_kunit-y := " + " \\\n\t".join(
                " ".join(objs[i:i + 5]) for i in range(0, len(objs), 5)) +
            "\n\nccflags-y += -I$(src)/..\n")
    kc = s.read(f"{DRV}/Kconfig")
    s.write(f"{DRV}/Kconfig", kc + KCONFIG_KUNIT)
    mk = s.read(f"{DRV}/Makefile")
    s.write(f"{DRV}/Makefile", mk + "\nobj-$(CONFIG_RDMA_SIM_KUNIT_TEST) += tests/\n")
    maintain(s, f"{DRV}/tests/")
    s.commit("RDMA/rdmasim: Add KUnit suites",
             "rdmasim_kunit.ko: the driver's suites, one per component (the\n"
             "device, PDs, MRs and ib_map_mr_sg()'s rules, CQs, QPs, fault\n"
             "injection, the PUDA pool, the loopback data path, the SMA and\n"
             "PMA, the subnet, the SA, multicast, memory windows, the mapped\n"
             "queues, the fabric). Loading the module runs them.")

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
    return s.format(os.path.join(out, "kernel"))


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
               "MAINTAINERS"]
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
    src = src.replace("RDMA_DRIVER_UNKNOWN);", "RDMA_DRIVER_RDMASIM);")
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
    s.commit("providers/rdmasim: Add a provider for rdmasim",
             "rdmasim (drivers/infiniband/sw/rdmasim) is a simulated RDMA\n"
             "device for testing the RDMA stack. Its provider maps the CQ,\n"
             "receive and send rings the kernel offers (rdmasim-abi.h), so\n"
             "that polls and posts need no system call, and goes through the\n"
             "command layer for everything else: contexts, PDs, MRs and DMA\n"
             "handles, AHs, CQs, QPs (RC, UC, UD, XRC), SRQs, memory windows,\n"
             "ODP. It matches the device by driver id, and by name or parent\n"
             "on kernels whose rdmasim reports none.")
    return s.format(os.path.join(out, "rdma-core"))


def helpers_body(helpers):
    lines = [line for line in helpers.splitlines()
             if not line.startswith("#include <rdmasim/")]
    return "\n".join(lines).strip()


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
