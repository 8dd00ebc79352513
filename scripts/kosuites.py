# SPDX-License-Identifier: GPL-2.0-only
"""The KUnit suites a built module (.ko) declares, read from its ELF.

kunit_test_suites() puts one pointer per suite into the module's
.kunit_test_suites section; in a relocatable .ko each pointer is a
relocation (symbol + addend) to the struct kunit_suite, whose first member
is the suite's name (char name[KUNIT_NAME_MAX_LEN]). So the names come
from what was compiled, whatever the C source looks like.

module_suites(ko) -> the names, in section order.
pointed_strings(ko, symbol) -> the strings a pointer array (or a char *)
named <symbol> points at, e.g. the conformance module's templates and its
default suites= parameter.

A small reader, 64-bit ELF only (every architecture the kernel's UML and
x86 builds use), no dependencies. Run as a script it prints the suites.
"""
import struct
import sys

SHT_SYMTAB, SHT_RELA, SHT_NOBITS = 2, 4, 8


class Elf:
    def __init__(self, path):
        with open(path, 'rb') as f:
            self.data = f.read()
        d = self.data
        if d[:4] != b'\x7fELF' or d[4] != 2:
            raise ValueError(f'{path}: not a 64-bit ELF file')
        self.e = '<' if d[5] == 1 else '>'
        shoff, = struct.unpack_from(self.e + 'Q', d, 0x28)
        shentsize, shnum, shstrndx = struct.unpack_from(self.e + 'HHH', d, 0x3a)
        self.sections = []
        for i in range(shnum):
            (name, typ, _flags, _addr, off, size, link, info, _align,
             entsize) = struct.unpack_from(self.e + 'IIQQQQIIQQ', d, shoff + i * shentsize)
            self.sections.append({'name': name, 'type': typ, 'off': off, 'size': size,
                                  'link': link, 'info': info, 'entsize': entsize})
        strtab = self.sections[shstrndx]
        for s in self.sections:
            s['name'] = self.cstr(strtab['off'] + s['name'])

    def cstr(self, off):
        return self.data[off:self.data.index(b'\0', off)].decode(errors='replace')

    def section(self, name):
        return next((i for i, s in enumerate(self.sections) if s['name'] == name), None)

    def symbols(self, symtab):
        s = self.sections[symtab]
        strs = self.sections[s['link']]['off']
        for off in range(s['off'], s['off'] + s['size'], 24):
            name, _info, _other, shndx, value, size = \
                struct.unpack_from(self.e + 'IBBHQQ', self.data, off)
            yield self.cstr(strs + name), shndx, value, size

    def relocations(self, target):
        """(offset in <target>, section index, offset there) for every
        relocation that applies to section <target>"""
        for rel in self.sections:
            if rel['type'] != SHT_RELA or rel['info'] != target:
                continue
            syms = list(self.symbols(rel['link']))
            for off in range(rel['off'], rel['off'] + rel['size'], 24):
                where, info, addend = struct.unpack_from(self.e + 'QQq', self.data, off)
                _name, shndx, value, _size = syms[info >> 32]
                yield where, shndx, value + addend

    def string_at(self, shndx, off):
        s = self.sections[shndx]
        if s['type'] == SHT_NOBITS or off >= s['size']:
            raise ValueError(f'a pointer into {s["name"]}+{off:#x} holds no string')
        return self.cstr(s['off'] + off)


def module_suites(ko):
    elf = Elf(ko)
    sec = elf.section('.kunit_test_suites')
    if sec is None:
        return []
    return [elf.string_at(shndx, off)
            for _where, shndx, off in sorted(elf.relocations(sec))]


def pointed_strings(ko, symbol):
    elf = Elf(ko)
    symtab = next(i for i, s in enumerate(elf.sections) if s['type'] == SHT_SYMTAB)
    for name, shndx, value, size in elf.symbols(symtab):
        if name == symbol and 0 < shndx < len(elf.sections):
            return [elf.string_at(t, off)
                    for where, t, off in sorted(elf.relocations(shndx))
                    if value <= where < value + size]
    raise ValueError(f'{ko}: no symbol {symbol}')


if __name__ == '__main__':
    for path in sys.argv[1:]:
        print(path + ':', ' '.join(module_suites(path)))
