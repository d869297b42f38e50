#!/usr/bin/env python3
"""textcheck.py MODE FILE: check report output that came from hostile strings.

MODE text      valid UTF-8, no control bytes except newline (tab allowed)
     folded    text, and every line is "<frames> <count>"
     diff      text, and every line is "<frames> <n> <n>"
     info      text, and every line is a "label:" line or indented
     stderr    text, and every line starts with "prof-report:" or "WARNING:"
Prints the first offending line (escaped) and exits 1.
"""
import re
import sys

mode, path = sys.argv[1], sys.argv[2]
data = open(path, 'rb').read()


def bad(msg, line=b''):
    print(f'{path}: {msg}: {line[:200]!r}', file=sys.stderr)
    sys.exit(1)


try:
    text = data.decode('utf-8', errors='strict')
except UnicodeDecodeError as e:
    bad(f'invalid UTF-8 at byte {e.start}', data[max(0, e.start - 40):e.start + 40])
for i, ch in enumerate(text):
    o = ord(ch)
    if (o < 0x20 and ch not in '\n\t') or o == 0x7f or 0x80 <= o < 0xa0:
        bad(f'control character U+{o:04X}', text[max(0, i - 40):i + 40].encode())
lines = text.split('\n')
if lines and lines[-1] == '':
    lines.pop()
pat = {
    'folded': r'.+ \d+',
    'diff': r'.+ \d+ \d+',
    'info': r'([a-z][a-z ]*:.*|  .*|)',
    'stderr': r'(prof-report:|WARNING:).*',
}.get(mode)
if pat:
    for ln in lines:
        if not re.fullmatch(pat, ln):
            bad(f'line breaks the {mode} format', ln.encode())
print(f'{path}: {len(lines)} {mode} lines ok')
