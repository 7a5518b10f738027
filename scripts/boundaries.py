#!/usr/bin/env python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""Checks the includes of every folder of the parts against the include
folders the build gives it (`make boundaries`, Makefile: PARTS, *_INC).

Each argument is FOLDER:FLAGS, FLAGS the folder's -I options. An include
"x.h" of a file of FOLDER is looked up as the compiler does: FOLDER
itself, then each include folder in order. It is refused when

  - it names a parent folder ("../x.h"): it would reach around them;
  - it is found in none of them but in another folder of the parts: the
    compiler of a .c file would refuse it too, but a header is compiled
    with the include folders of whoever includes it, so a header that
    reaches a folder its own may not include would compile from there;
  - it is found through one of them in a folder of the parts below it
    ("rules/x.h" through -Ianalysis) that is not one of them.

An include found nowhere is made by the build (a BPF skeleton, protobuf-c's
code) and left to the compiler. Every source file of the parts must be in
one of the folders given, so that a new folder comes with its arrows; no
two headers of the parts may share a name, so that the order of the
include folders never decides which one an include means; and the row of
each folder of lib/, analysis/ and user/ in docs/architecture.md names
every module of it ("`x.c`" or "`x.h`"). Exits 1 with what is wrong,
else 0.
"""
import os
import re
import sys

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)
TOPS = ('format', 'lib', 'analysis', 'user', 'bpf', 'cupti_bridge')
NOT_SOURCE = ('analysis/proto',)
DOC = 'docs/architecture.md'
NAMED = ('lib/', 'analysis/', 'user/')


def parse(args):
    parts = {}
    for arg in args:
        folder, _, flags = arg.partition(':')
        dirs = [os.path.normpath(f[2:]) for f in flags.split() if f.startswith('-I')]
        parts[os.path.normpath(folder)] = [d for d in dirs if not os.path.isabs(d)]
    return parts


def sources():
    found = []
    for top in TOPS:
        for root, dirs, files in os.walk(top):
            dirs[:] = [d for d in dirs if os.path.join(root, d) not in NOT_SOURCE]
            found += [os.path.join(root, f) for f in files if f.endswith(('.c', '.h'))]
    return sorted(found)


def main():
    parts = parse(sys.argv[1:])
    files = sources()
    bad = []
    for f in files:
        if os.path.dirname(f) not in parts:
            bad.append(f"{f}: in a folder the build does not know: add it to PARTS in the Makefile, "
                       "with the folders it may include, and to docs/architecture.md")
    headers = {}
    for f in files:
        if f.endswith('.h'):
            headers.setdefault(os.path.basename(f), []).append(f)
    for name, where in sorted(headers.items()):
        if len(where) > 1:
            bad.append(f"{name}: a header of this name in {', '.join(where)}: rename one")
    part_files = set(files)
    for f in files:
        folder = os.path.dirname(f)
        if folder not in parts:
            continue
        allowed = list(dict.fromkeys([folder] + parts[folder]))
        with open(f, encoding='utf-8', errors='replace') as src:
            text = src.read()
        for inc in INCLUDE.findall(text):
            if '..' in inc.split('/'):
                bad.append(f"{f}: #include \"{inc}\" reaches around the include folders: include it by its "
                           "name from a folder this one may include")
                continue
            hit = next((os.path.normpath(os.path.join(d, inc)) for d in allowed
                        if os.path.isfile(os.path.join(d, inc))), None)
            if hit is None:
                hit = next((p for p in part_files if p.endswith('/' + inc)), None)
                if hit is None:
                    continue	# made by the build
            if os.path.dirname(hit) in parts and os.path.dirname(hit) not in allowed:
                bad.append(f"{f}: #include \"{inc}\" is {hit}, in {os.path.dirname(hit)}/, which {folder}/ may "
                           f"not include (it may include {', '.join(d + '/' for d in allowed)}: Makefile, "
                           "docs/architecture.md)")
    with open(DOC, encoding='utf-8') as doc:
        rows = {m.group(1): m.group(0) for m in re.finditer(r'^\| `([a-z_/]+)/` \|.*$', doc.read(), re.M)}
    for f in files:
        folder, name = os.path.split(f)
        if not (folder + '/').startswith(NAMED):
            continue
        module = os.path.splitext(name)[0]
        row = rows.get(folder, '')
        if f'`{module}.c`' not in row and f'`{module}.h`' not in row:
            bad.append(f"{f}: {DOC} does not name it in the row of {folder}/: say there what it is for")
    for line in bad:
        print(line, file=sys.stderr)
    return 1 if bad else 0


if __name__ == '__main__':
    sys.exit(main())
