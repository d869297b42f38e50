#!/usr/bin/env python3
"""exportcheck.py KIND FILE: an export written from hostile strings must
still be a valid document of its kind.

KIND speedscope  strict UTF-8 JSON (json.loads); each sampled profile spans
                 its weights: endValue - startValue is their sum (or, past
                 2^64, at least the largest: a total that wrapped is not)
     svg         strict UTF-8, well-formed XML (xml.etree)
     pprof       gzip; every string of profile.proto's string_table (field 6)
                 valid UTF-8 (Go's proto decoder rejects anything else);
                 every sample value (Sample.value, field 2 of field 2)
                 non-negative, and with [samples, cpu time] values the time
                 at least the count (period >= 1 ns: a product that wrapped)
"""
import gzip
import json
import sys
import xml.etree.ElementTree as ET

kind, path = sys.argv[1], sys.argv[2]
data = open(path, 'rb').read()


def bad(msg):
    print(f'{path}: {msg}', file=sys.stderr)
    sys.exit(1)


def varint(b, i):
    v = s = 0
    while True:
        if i >= len(b):
            raise ValueError('truncated varint')
        c = b[i]
        i += 1
        v |= (c & 0x7f) << s
        s += 7
        if not c & 0x80:
            return v, i


def check_sample(msg):
    """Sample: 1 location_id (packed), 2 value (packed int64), 3 label."""
    j = 0
    allv = []
    while j < len(msg):
        key, j = varint(msg, j)
        f, wt = key >> 3, key & 7
        vals = []
        if wt == 0:
            v, j = varint(msg, j)
            vals = [v] if f == 2 else []
        elif wt == 2:
            ln, j = varint(msg, j)
            sub = msg[j:j + ln]
            j += ln
            if f == 2:
                k = 0
                while k < len(sub):
                    v, k = varint(sub, k)
                    vals.append(v)
        elif wt == 1:
            j += 8
        elif wt == 5:
            j += 4
        for v in vals:
            if v >= 1 << 63:
                bad(f'negative sample value {v - (1 << 64)} (overflow)')
        allv += vals
    if len(allv) == 2 and allv[1] < allv[0]:
        bad(f'sample cpu time {allv[1]} below its count {allv[0]} (product wrapped)')


if kind == 'speedscope':
    try:
        doc = json.loads(data.decode('utf-8'))
    except (UnicodeDecodeError, ValueError) as e:
        bad(f'not valid UTF-8 JSON: {e}')
    for prof in doc.get('profiles', []):
        if prof.get('type') != 'sampled':
            continue
        w = prof.get('weights', [])
        span = prof.get('endValue', 0) - prof.get('startValue', 0)
        total = sum(w)
        if (total < 1 << 64 and span != total) or (w and span < max(w)):
            bad(f'profile {prof.get("name")!r}: endValue - startValue = {span}, weights sum to {total}')
elif kind == 'svg':
    try:
        data.decode('utf-8')
        ET.fromstring(data)
    except (UnicodeDecodeError, ET.ParseError) as e:
        bad(f'not well-formed UTF-8 XML: {e}')
elif kind == 'pprof':
    try:
        raw = gzip.decompress(data)
    except OSError as e:
        bad(f'not gzip: {e}')
    i, n = 0, 0
    try:
        while i < len(raw):
            key, i = varint(raw, i)
            field, wt = key >> 3, key & 7
            if wt == 0:
                _, i = varint(raw, i)
            elif wt == 1:
                i += 8
            elif wt == 5:
                i += 4
            elif wt == 2:
                ln, i = varint(raw, i)
                chunk = raw[i:i + ln]
                if len(chunk) != ln:
                    bad('truncated field')
                i += ln
                if field == 2:
                    check_sample(chunk)
                if field == 6:
                    n += 1
                    try:
                        chunk.decode('utf-8')
                    except UnicodeDecodeError:
                        bad(f'string_table entry {n} is not UTF-8: {chunk[:80]!r}')
            else:
                bad(f'bad wire type {wt}')
    except ValueError as e:
        bad(str(e))
    if n == 0:
        bad('no string_table')
else:
    bad(f'unknown kind {kind}')
print(f'{path}: valid {kind}')
