#!/usr/bin/env python3
"""Instructions per function of one pfvm_exec_run on QEMU: reads a trace
from `qemu-system-arm ... -d in_asm,exec,nochain -D LOG` of a tests/mcu
firmware and its ELF, counts the instructions of each executed block from
the first block of pfvm_exec_run up to main.c's next mcu_ticks call,
and prints the functions that took the most.

    python3 bench/qemu_profile.py ELF LOG [TOP]
"""
import bisect
import collections
import re
import subprocess
import sys


def symbols(elf):
    out = subprocess.run(['arm-none-eabi-nm', '-n', '-S', elf], capture_output=True, text=True, check=True).stdout
    syms = []
    for line in out.splitlines():
        p = line.split()
        if len(p) >= 4 and p[2] in 'tTwW':
            syms.append((int(p[0], 16), max(int(p[1], 16), 1), p[3]))
    return syms


def main():
    elf, log = sys.argv[1], sys.argv[2]
    top = int(sys.argv[3]) if len(sys.argv) > 3 else 15
    syms = symbols(elf)
    starts = [s[0] for s in syms]

    def name(pc):
        i = bisect.bisect_right(starts, pc) - 1
        return syms[i][2] if i >= 0 and pc < syms[i][0] + syms[i][1] else '?'

    blocks, cur, counts, state = {}, None, collections.Counter(), 0
    for line in open(log, errors='replace'):
        if line.startswith('IN:'):
            cur = []
            continue
        m = re.match(r'^0x([0-9a-f]+):\s', line)
        if m and cur is not None:
            cur.append(int(m.group(1), 16))
            continue
        m = re.search(r'Trace \d+: 0x[0-9a-f]+ \[[0-9a-f]+/([0-9a-f]+)/', line)
        if not m:
            continue
        if cur:
            blocks[cur[0]] = cur
        cur = None
        pc = int(m.group(1), 16)
        f = name(pc)
        if f == 'pfvm_exec_run' and state == 0:
            state = 1
        elif f in ('mcu_ticks', 'put_str') and state == 1:
            state = 2
        if state == 1:
            for a in blocks.get(pc, ()):
                counts[name(a)] += 1
    total = sum(counts.values())
    print('| function | instructions | share |')
    print('| --- | ---: | ---: |')
    for f, n in counts.most_common(top):
        print('| %s | %d | %.1f%% |' % (f, n, 100.0 * n / max(total, 1)))
    print('| (all) | %d | 100%% |' % total)


main()
