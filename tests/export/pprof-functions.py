#!/usr/bin/env python3
"""pprof-functions.py FILE.pb.gz: print "name<TAB>system_name" of every
Function in a pprof profile, decoding profile.proto's wire format directly
(no protobuf library: varints and length-delimited fields only)."""
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


data = gzip.open(sys.argv[1]).read()
strings, funcs = [], []
for num, v in fields(data):
    if num == 6:
        strings.append(v.decode("utf-8"))
    elif num == 5:
        funcs.append(dict(fields(v)))
for f in funcs:
    print(f"{strings[f.get(2, 0)]}\t{strings[f.get(3, 0)]}")
