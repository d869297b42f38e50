#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""stack-ends.py [-a] DUMP [COMM]: where the walked user stacks that are not
complete end (with -a: every walked stack, complete or not).

DUMP is bprof-dump's text of a recording (tests/tools/bprof-dump FILE).
For every walked user stack of COMM (default: every process) whose flags
do not say "complete", the outermost recorded pc is put back into its
object (mapping -> file offset -> virtual address through the PT_LOAD that
holds it) and described from the object itself: the section it is in, the
nearest symbol at or below it (.symtab, else .dynsym; "e_entry" for the
object's entry point, which stripped objects such as ld.so do not name),
and whether an FDE of .eh_frame_hdr's table covers it.  Prints one line
per (state, object, section, symbol, FDE, flags) with its samples, most
first, then the totals:

    samples  incomplete|complete  object  section  symbol+off  fde|NO-FDE  flags

flags: cut (depth limit), fp (some frame came from a frame pointer).
A stack with no pc in a known mapping is listed as "?".  Reads only
ELF files named in the dump (their recorded paths, as they are now on
this host; a changed file is not detected: run it where you recorded)."""
import bisect
import collections
import struct
import sys


class Elf:
    def __init__(self, path):
        with open(path, 'rb') as f:
            self.data = f.read()
        d = self.data
        if d[:4] != b'\x7fELF' or d[4] != 2:
            raise ValueError('not a 64-bit ELF file')
        (self.phoff, self.shoff) = struct.unpack_from('<QQ', d, 0x20)
        (phentsize, phnum, shentsize, shnum, shstrndx) = struct.unpack_from('<HHHHH', d, 0x36)
        self.loads = []
        for i in range(phnum):
            p = struct.unpack_from('<IIQQQQQQ', d, self.phoff + i * phentsize)
            if p[0] == 1:  # PT_LOAD: (offset, vaddr, filesz, flags)
                self.loads.append((p[2], p[3], p[5], p[1]))
        self.secs = []
        for i in range(shnum):
            s = struct.unpack_from('<IIQQQQIIQQ', d, self.shoff + i * shentsize)
            self.secs.append(dict(name=s[0], type=s[1], addr=s[3], off=s[4], size=s[5],
                                  link=s[6], entsize=s[9]))
        (self.entry,) = struct.unpack_from('<Q', d, 0x18)
        if shnum:
            names = self.secs[shstrndx]
            for s in self.secs:
                end = d.index(b'\0', names['off'] + s['name'])
                s['name'] = d[names['off'] + s['name']:end].decode()
        self._syms = None
        self._fdes = None

    def vaddr(self, off):
        """The virtual address of file offset off, from the executable
        PT_LOAD holding it (as the recorder computes the bias)."""
        for (o, v, sz, fl) in self.loads:
            if o <= off < o + sz and fl & 1:
                return v + off - o
        for (o, v, sz, fl) in self.loads:
            if o <= off < o + sz:
                return v + off - o
        return None

    def section(self, addr):
        for s in self.secs:
            if s['addr'] and s['addr'] <= addr < s['addr'] + s['size'] and s['type'] != 8:
                return s['name']
        return '-'

    def symbol(self, addr):
        if self._syms is None:
            syms = {}
            for want in ('.symtab', '.dynsym'):
                for s in self.secs:
                    if s['name'] != want:
                        continue
                    strs = self.secs[s['link']]['off']
                    for i in range(s['size'] // 24):
                        (nm, info, _, shndx, value, size) = struct.unpack_from(
                            '<IBBHQQ', self.data, s['off'] + i * 24)
                        if value and shndx and (info & 0xf) in (0, 2):
                            end = self.data.index(b'\0', strs + nm)
                            syms.setdefault(value, (self.data[strs + nm:end].decode(), size))
                if syms:
                    break
            if self.entry:
                syms[self.entry] = ('e_entry', 0)
            self._syms = sorted((v, n, sz) for v, (n, sz) in syms.items())
        i = bisect.bisect_right(self._syms, (addr, '\uffff', 1 << 64)) - 1
        if i < 0:
            return '-'
        (v, n, sz) = self._syms[i]
        inside = '' if sz == 0 or addr < v + sz else '(past end)'
        return '%s+%#x%s' % (n, addr - v, inside)

    def fde_covers(self, addr):
        """True, False, or None when there is no .eh_frame_hdr table."""
        if self._fdes is None:
            self._fdes = []
            hdr = [s for s in self.secs if s['name'] == '.eh_frame_hdr']
            if not hdr:
                return None
            h = hdr[0]
            d = self.data
            (ver, ptr_enc, cnt_enc, tab_enc) = struct.unpack_from('<BBBB', d, h['off'])
            if (ver, ptr_enc, cnt_enc, tab_enc) != (1, 0x1b, 0x03, 0x3b):
                return None
            (n,) = struct.unpack_from('<I', d, h['off'] + 8)
            ehf = [s for s in self.secs if s['name'] == '.eh_frame'][0]
            for i in range(n):
                (loc, fde) = struct.unpack_from('<ii', d, h['off'] + 12 + 8 * i)
                loc += h['addr']
                fde += h['addr']
                fo = ehf['off'] + fde - ehf['addr']
                (rng,) = struct.unpack_from('<I', d, fo + 12)  # pcrel sdata4 pc_begin, udata4 range
                self._fdes.append((loc, loc + rng))
        i = bisect.bisect_right(self._fdes, (addr, 1 << 64)) - 1
        return i >= 0 and self._fdes[i][0] <= addr < self._fdes[i][1]


def main():
    args = sys.argv[1:]
    every = bool(args) and args[0] == '-a'
    if every:
        args = args[1:]
    if len(args) not in (1, 2):
        sys.exit(__doc__)
    comm = args[1] if len(args) == 2 else None
    stacks, flags, maps, objs, counts = {}, {}, collections.defaultdict(list), {}, []
    for line in open(args[0], encoding='utf-8', errors='replace'):
        f = line.rstrip('\n').split(' ')
        if f[0] == 'stack':
            stacks[int(f[1])] = [int(x, 16) for x in f[3:3 + int(f[2])]]
        elif f[0] == 'stackflags':
            flags[int(f[1])] = int(f[2], 16)
        elif f[0] == 'mapping':
            maps[(int(f[1]), int(f[2]))].append((int(f[3], 16), int(f[4], 16), int(f[5], 16), int(f[6])))
        elif f[0] == 'object':
            objs[int(f[1])] = ' '.join(f[9:])
        elif f[0] == 'count' and f[4] != 'none':
            if comm is None or ' '.join(f[8:]) == comm:
                counts.append((int(f[1]), int(f[3]), int(f[4]), int(f[7])))
    elves = {}
    ends = collections.Counter()
    total = complete = 0
    for (pid, gen, sid, n) in counts:
        if sid < (1 << 30) or sid not in stacks:
            continue  # not walked by the unwinder
        total += n
        fl = flags.get(sid, 0)
        if fl & 2:
            complete += n
            if not every:
                continue
        pc = stacks[sid][-1]
        # the outermost frame is a return address unless it is the only one
        look = pc - 1 if len(stacks[sid]) > 1 else pc
        where = ('?', '-', '-', '-')
        for (start, end, off, obj) in maps.get((pid, gen), []):
            if start <= look < end:
                path = objs.get(obj, '?')
                try:
                    e = elves.setdefault(path, Elf(path) if path.startswith('/') else None)
                except (OSError, ValueError):
                    e = elves[path] = None
                if e is None:
                    where = (path, '-', '%s+%#x' % (path, look - start + off), '-')
                    break
                va = e.vaddr(look - start + off)
                if va is None:
                    where = (path, '-', 'offset %#x' % (look - start + off), '-')
                    break
                fde = e.fde_covers(va)
                where = (path, e.section(va), e.symbol(va),
                         'fde' if fde else 'NO-FDE' if fde is False else 'no-hdr')
                break
        tags = ','.join(t for b, t in ((4, 'cut'), (8, 'fp')) if fl & b) or '-'
        ends[('complete' if fl & 2 else 'incomplete',) + where + (tags,)] += n
    for (key, n) in ends.most_common():
        print('%6d  %s' % (n, '  '.join(key)))
    print('%d of %d walked stacks complete (%.1f %%), %d not' %
          (complete, total, 100.0 * complete / total if total else 0, total - complete))


if __name__ == '__main__':
    main()
