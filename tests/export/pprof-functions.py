#!/usr/bin/env python3
"""pprof-functions.py FILE.pb.gz: print "name<TAB>system_name" of every
Function in a pprof profile, decoding profile.proto's wire format directly
(no protobuf library: varints and length-delimited fields only).
pprof-functions.py --samples FILE.pb.gz: "name<TAB>samples" instead, the
samples (first value) of the stacks that hold the function."""
import gzip
import sys


def fields(buf):
    i = 0
    while i < len(buf):
        key, i = varint(buf, i)
        num, wt = key >> 3, key & 7
        if wt == 0:
            v, i = varint(buf, i)
        elif wt == 2:
            n, i = varint(buf, i)
            v, i = buf[i:i + n], i + n
        elif wt == 1:
            v, i = buf[i:i + 8], i + 8
        elif wt == 5:
            v, i = buf[i:i + 4], i + 4
        else:
            raise ValueError(f"wire type {wt}")
        yield num, v


def varint(buf, i):
    shift = v = 0
    while True:
        b = buf[i]
        i += 1
        v |= (b & 0x7f) << shift
        shift += 7
        if not b & 0x80:
            return v, i


def packed(v):
    """A repeated varint field: packed bytes, or one varint."""
    if isinstance(v, int):
        return [v]
    out, i = [], 0
    while i < len(v):
        x, i = varint(v, i)
        out.append(x)
    return out


samples_mode = sys.argv[1] == "--samples"
data = gzip.open(sys.argv[-1]).read()
strings, funcs, locs, samples = [], [], {}, []
for num, v in fields(data):
    if num == 6:
        strings.append(v.decode("utf-8"))
    elif num == 5:
        funcs.append(dict(fields(v)))
    elif num == 4 and samples_mode:
        loc = {"id": 0, "funcs": []}
        for n2, v2 in fields(v):
            if n2 == 1:
                loc["id"] = v2
            elif n2 == 4:
                loc["funcs"].append(dict(fields(v2)).get(1, 0))
        locs[loc["id"]] = loc["funcs"]
    elif num == 2 and samples_mode:
        ids, vals = [], []
        for n2, v2 in fields(v):
            if n2 == 1:
                ids += packed(v2)
            elif n2 == 2:
                vals += packed(v2)
        samples.append((ids, vals[0] if vals else 0))
if samples_mode:
    names = {f.get(1, 0): strings[f.get(2, 0)] for f in funcs}
    total = {}
    for ids, n in samples:
        for name in {names.get(fid, "?") for i in ids for fid in locs.get(i, [])}:
            total[name] = total.get(name, 0) + n
    for name, n in sorted(total.items()):
        print(f"{name}\t{n}")
else:
    for f in funcs:
        print(f"{strings[f.get(2, 0)]}\t{strings[f.get(3, 0)]}")
