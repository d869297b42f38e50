#!/usr/bin/env python3
"""mancheck.py PROG HELP MANPAGE COMPLETION [DOC...]: --help, the man page,
the bash completion and the docs agree about PROG's options.

HELP is the output of `PROG --help`.  Checks, each printed as "ok:" or
"FAIL:" (exit 1 if any failed):
  - every long option of --help's option list has an entry (a .TP heading)
    in the man page's OPTIONS section, and every entry there is in --help;
  - where --help gives a default value (a number or a path), the man page's
    entry for that option gives the same one;
  - every command of --help's EXAMPLES is in the man page's EXAMPLES;
  - the completion script offers every long option of --help;
  - every option used on a `PROG ...` line of a DOC's code blocks (README.md,
    docs/*.md) is one --help lists.
"""
import re
import sys

prog, help_path, man_path, comp_path = sys.argv[1:5]
docs = sys.argv[5:]
fails = 0


def report(ok, what, detail=""):
    global fails
    if ok:
        print(f"ok: {prog}: {what}")
    else:
        fails += 1
        print(f"FAIL: {prog}: {what}" + (f": {detail}" if detail else ""))


def unroff(s):
    """Man page text as it reads: font escapes gone, \\- as -."""
    s = re.sub(r"\\f[BIRP]", "", s)
    s = s.replace("\\-", "-").replace("\\e", "\\").replace('\\"', "")
    s = re.sub(r"^\.(B|I|BR|RB|BI|IB|IR|RI)\s+", "", s, flags=re.M)
    return s.replace('"', "")


# ---- --help: the option list and its descriptions
help_text = open(help_path).read()
opts = {}       # long option -> description (joined lines)
shorts = set()  # short options
cur = None
for line in help_text.splitlines():
    m = re.match(r"^\s{1,8}(?:-(\S), )?--([a-z][a-z0-9-]*)(?:[=\[]\S*)?\s*(.*)$", line)
    if m and line.lstrip().startswith("-") and len(line) - len(line.lstrip()) <= 8:
        if m.group(1):
            shorts.add(m.group(1))
        cur = m.group(2)
        opts[cur] = m.group(3)
    elif cur and re.match(r"^\s{20,}\S", line):
        opts[cur] += " " + line.strip()
    else:
        cur = None
report(len(opts) >= 10, f"--help lists {len(opts)} long options", "too few: is the parser broken?")


def examples(text, start_pat):
    """Command lines of an EXAMPLES block (comments and spacing dropped)."""
    out, inside = [], False
    for line in text.splitlines():
        if re.match(start_pat, line):
            inside = True
            continue
        if inside:
            if re.match(r"^\S", line) and not line.startswith(prog):
                break
            cmd = line.split("#", 1)[0].strip()
            if cmd.startswith(prog):
                out.append(" ".join(cmd.split()))
    return out


# ---- the man page: OPTIONS entries (.TP then the heading line)
man_raw = open(man_path).read()
sections = re.split(r"^\.SH\s+", man_raw, flags=re.M)
man_sec = {s.split("\n", 1)[0].strip().strip('"'): s for s in sections[1:]}
opt_sec = man_sec.get("OPTIONS", "")
report(bool(opt_sec), "the man page has an OPTIONS section")
entries = {}  # long option -> entry text
lines = opt_sec.splitlines()
for i, line in enumerate(lines):
    if line.strip() == ".TP" and i + 1 < len(lines):
        head = unroff(lines[i + 1])
        body = []
        for nxt in lines[i + 2:]:
            if nxt.strip() in (".TP", ".PP") or nxt.startswith(".SS"):
                break
            body.append(nxt)
        for name in re.findall(r"--([a-z][a-z0-9-]*)", head):
            entries[name] = unroff("\n".join(body))

missing = sorted(set(opts) - set(entries))
report(not missing, "every --help option has a man page entry",
       " ".join("--" + o for o in missing))
extra = sorted(set(entries) - set(opts))
report(not extra, "every man page entry is an option --help lists",
       " ".join("--" + o for o in extra))

# defaults: the value after "default" in --help, where it is a value
bad = []
for name, desc in opts.items():
    for m in re.finditer(r"\(default:?\s+([^\s;,)]+)", desc):
        val = m.group(1).rstrip(".")
        if not re.search(r"[0-9/$]", val):
            continue  # a word ("keep all"), not a value
        if name in entries and not re.search(r"(?<![\w.])" + re.escape(val) + r"(?![\w])",
                                             entries[name]):
            bad.append(f"--{name} default {val}")
report(not bad, "the man page gives --help's defaults", "; ".join(bad))

# examples
hx = examples(help_text, r"^EXAMPLES:")
mx = [" ".join(unroff(l).split("#", 1)[0].split())
      for l in man_sec.get("EXAMPLES", "").splitlines() if not l.startswith(".")]
gone = [x for x in hx if x not in mx]
report(bool(hx) and not gone, f"the man page has --help's {len(hx)} examples", " | ".join(gone))

# ---- the completion script
comp = open(comp_path).read()
words = set(re.findall(r"--([a-z][a-z0-9-]*)", comp))
nc = sorted(set(opts) - words)
report(not nc, "the bash completion offers every long option", " ".join("--" + o for o in nc))

# ---- the docs: options used in code blocks
unknown = []
for doc in docs:
    inside = False
    for n, line in enumerate(open(doc), 1):
        if line.startswith("```"):
            inside = not inside
            continue
        if not inside:
            continue
        # a command line of this program, possibly after sudo, a path or a pipe
        for cmd in re.split(r"[|;&]|\$\(", line.split("#", 1)[0]):
            w = cmd.split()
            while w and (w[0] in ("sudo", "do", "then") or "=" in w[0]):
                w = w[1:]
            if not w or w[0].rsplit("/", 1)[-1] != prog:
                continue
            for tok in w[1:]:
                if tok == "--":
                    break  # the COMMAND's own options follow
                m = re.match(r"^--([a-z][a-z0-9-]*)", tok)
                if m and m.group(1) not in opts:
                    unknown.append(f"{doc}:{n}: --{m.group(1)}")
                m = re.match(r"^-([A-Za-z?])", tok)
                if m and not tok.startswith("--") and m.group(1) not in shorts:
                    unknown.append(f"{doc}:{n}: -{m.group(1)}")
if docs:
    report(not unknown, f"the options used in {len(docs)} docs' examples exist",
           "; ".join(unknown))

sys.exit(1 if fails else 0)
