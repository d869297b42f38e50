#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""dumpq.py DUMP QUERY [ARGS]: questions the record e2e tests ask of a
bprof-dump text file (format: see tools/bprof-dump).  Prints the answer on
stdout; exits 1 when a check-style query fails."""
import collections
import sys


def stack_id(s):
    return -2**31 if s == 'none' else int(s)


def sym_range(binary, name):
    import subprocess
    out = subprocess.run(['nm', '-S', binary], capture_output=True, text=True, check=True).stdout
    for line in out.splitlines():
        f = line.split()
        if len(f) == 4 and f[3] == name:
            return int(f[0], 16), int(f[0], 16) + int(f[1], 16)
    raise SystemExit('no symbol %s in %s' % (name, binary))


def parse(path):
    d = collections.defaultdict(list)
    d['stacks'] = {}
    d['maps'] = collections.defaultdict(list)
    d['procs'] = {}
    d['loss'] = {}
    for line in open(path, encoding='utf-8', errors='replace'):
        f = line.rstrip('\n').split(' ')
        t = f[0]
        if t == 'count':
            d['counts'].append(dict(pid=int(f[1]), tid=int(f[2]), exec_id=int(f[3]),
                                    ustack=stack_id(f[4]), kstack=stack_id(f[5]),
                                    kip=int(f[6], 16), count=int(f[7]),
                                    comm=' '.join(f[8:])))
        elif t == 'stack':
            d['stacks'][int(f[1])] = [int(x, 16) for x in f[3:3 + int(f[2])]]
        elif t == 'mapping':
            d['maps'][(int(f[1]), int(f[2]))].append(
                dict(start=int(f[3], 16), end=int(f[4], 16), off=int(f[5], 16),
                     obj=int(f[6]), flags=int(f[7], 16)))
        elif t == 'object':
            d['objects'].append(dict(index=int(f[1]), build_id=f[2], flags=int(f[3], 16),
                                     path=' '.join(f[9:])))
        elif t == 'process':
            d['procs'][(int(f[1]), int(f[3]))] = dict(ns_pid=int(f[2]), nr=int(f[4]),
                                                      comm=' '.join(f[7:]))
        elif t == 'loss':
            d['loss'][f[1]] = int(f[2])
    return d


def counts_of(d, comm):
    return [c for c in d['counts'] if comm == '*' or c['comm'] == comm]


def main():
    d = parse(sys.argv[1])
    q, args = sys.argv[2], sys.argv[3:]
    if q == 'samples':            # samples COMM: total count
        print(sum(c['count'] for c in counts_of(d, args[0])))
    elif q == 'pids':             # pids COMM: distinct pids with counts
        print(' '.join(str(p) for p in sorted({c['pid'] for c in counts_of(d, args[0])})))
    elif q == 'loss':             # loss NAME
        print(d['loss'].get(args[0], 0))
    elif q == 'kstacks':          # kstacks COMM: samples with a kernel stack
        print(sum(c['count'] for c in counts_of(d, args[0]) if c['kstack'] >= 0))
    elif q == 'kip':              # kip COMM: samples with a kernel ip
        print(sum(c['count'] for c in counts_of(d, args[0]) if c['kip'] != 0))
    elif q == 'build-id-mapped':  # build-id-mapped COMM BUILD_ID: mapped by a COMM process?
        objs = {o['index'] for o in d['objects'] if o['build_id'] == args[1]}
        keys = {(c['pid'], c['exec_id']) for c in counts_of(d, args[0])}
        hit = any(m['obj'] in objs for k in keys for m in d['maps'].get(k, []))
        print('yes' if hit else 'no')
        return 0 if hit else 1
    elif q == 'ips-in-maps':      # ips-in-maps COMM [FRAMES]: every user ip (of the
        # first FRAMES of each stack) inside a mapping
        # FRAMES 'own': stop after the first frame outside the workload's own
        # binary (the chain is only trustworthy through frame-pointer code).
        own = len(args) > 1 and args[1] == 'own'
        frames = int(args[1]) if len(args) > 1 and not own else 1 << 30
        bad = total = 0
        for c in counts_of(d, args[0]):
            if c['ustack'] < 0:
                continue
            maps = d['maps'].get((c['pid'], c['exec_id']), [])
            for ip in d['stacks'].get(c['ustack'], [])[:frames]:
                total += 1
                hit = [m for m in maps if m['start'] <= ip < m['end']]
                if own and hit and not d['objects'][hit[0]['obj']]['path'].endswith('/' + args[0]):
                    break
                if not hit:
                    bad += 1
                    print('outside: pid %d exec %d ip %#x' % (c['pid'], c['exec_id'], ip),
                          file=sys.stderr)
        print('%d %d' % (bad, total))
        return 1 if bad or not total else 0
    elif q == 'coverage':         # coverage COMM...: percent of images with a snapshot
        keys = set()
        for comm in args:
            keys |= {(c['pid'], c['exec_id']) for c in counts_of(d, comm) if c['ustack'] >= 0}
        have = sum(1 for k in keys if k in d['procs'] and d['procs'][k]['nr'] > 0)
        print('%d %d %d' % (have * 100 // max(len(keys), 1), have, len(keys)))
    elif q == 'leaf-in':          # leaf-in COMM BINARY SYMBOL: samples whose leaf ip is in SYMBOL of BINARY
        # (vaddr == file offset for the text of our workloads' PIE layout)
        lo, hi = sym_range(args[1], args[2])
        n = 0
        for c in counts_of(d, args[0]):
            st = d['stacks'].get(c['ustack'], [])
            if not st:
                continue
            for m in d['maps'].get((c['pid'], c['exec_id']), []):
                if m['start'] <= st[0] < m['end']:
                    off = st[0] - m['start'] + m['off']
                    if lo <= off < hi and d['objects'][m['obj']]['path'].endswith('/' + args[0]):
                        n += c['count']
        print(n)
    elif q == 'obj-flag':         # obj-flag BUILD_ID|PATH FLAG: an object (with a build-id) has FLAG
        hit = any((o['build_id'] == args[0] or o['path'] == args[0] or
                   o['path'].endswith('/' + args[0])) and o['build_id'] != '-' and
                  o['flags'] & int(args[1], 0) for o in d['objects'])
        print('yes' if hit else 'no')
        return 0 if hit else 1
    elif q == 'anon-map':         # anon-map PID: an ANON mapping without object
        hit = any(m['flags'] & 1 and m['obj'] == -1
                  for k, ms in d['maps'].items() if k[0] == int(args[0]) for m in ms)
        print('yes' if hit else 'no')
        return 0 if hit else 1
    else:
        print('unknown query ' + q, file=sys.stderr)
        return 2
    return 0


if __name__ == '__main__':
    sys.exit(main())
