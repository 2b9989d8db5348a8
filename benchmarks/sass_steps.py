#!/usr/bin/env python3
"""Static instruction counts of a streaming kernel's steps, read from its SASS.

A step of the plane and column streams ends at a block barrier (BAR.SYNC), so the code between
two barriers, in program order, is one step's body (plus, for the first, the kernel's prologue,
and for a loop that runs two steps an iteration, the loop's top in one of them). For each such
segment this prints the instructions split into:
  common  - basic blocks that every warp of an interior tile runs;
  restore - basic blocks with four or more FSEL (the lanes' restore of points outside the
            interior: only tiles at the box's faces run them);
  store   - basic blocks with a global store (only warps holding stored rows run them);
and, of the common ones, the FADD/FMUL (the stencil's arithmetic), the MOVs and local-memory
accesses (spills). These are counts of code, not of issued instructions: a measurement on the GPU
(Nsight Compute's instructions issued) decides what they are worth.

Usage (no GPU needed):
  nvcc -std=c++17 -O3 -arch=sm_90 -cubin -Iinclude FILE.cu -o k.cubin
  nvdisasm -c k.cubin > k.sass
  benchmarks/sass_steps.py k.sass [SUBSTRING OF A MANGLED KERNEL NAME ...]
"""
import re
import sys
from collections import Counter

KERNEL = re.compile(r"\s*\.text\.(\S+):")
LABEL = re.compile(r"\.L_x_\d+:")
INSTRUCTION = re.compile(r"\s+/\*[0-9a-f]{4,}\*/\s+(.*?)\s*;")


def segments(lines):
    """{kernel: [segment, ...]}, a segment a list of instructions and 'LABEL' markers."""
    kernels, kernel, current = {}, None, []
    for line in lines:
        match = KERNEL.match(line)
        if match:
            kernel, current = match.group(1), []
            kernels[kernel] = []
            continue
        if kernel is None:
            continue
        if LABEL.match(line.strip()):
            current.append("LABEL")
            continue
        match = INSTRUCTION.match(line)
        if match:
            current.append(match.group(1))
            if "BAR.SYNC" in match.group(1):
                kernels[kernel].append(current)
                current = []
    return kernels


def basic_blocks(segment):
    blocks, block = [], []
    for item in segment:
        if item == "LABEL":
            if block:
                blocks.append(block)
            block = []
            continue
        block.append(item)
        if "BRA" in item:
            blocks.append(block)
            block = []
    if block:
        blocks.append(block)
    return blocks


def opcode(instruction):
    return re.sub(r"^@!?U?P\w+\s+", "", instruction).split(" ")[0].split(".")[0]


def describe(segment):
    common, moves, restore, store = [], 0, 0, 0
    for block in basic_blocks(segment):
        ops = [opcode(i) for i in block]
        if ops.count("FSEL") >= 4:
            restore += len(block)
        elif "STG" in ops:
            store += len(block)
        else:
            common += ops
            moves += sum(bool(re.match(r"(@!?U?P\w+\s+)?(MOV|IMAD\.MOV)\b", i)) for i in block)
    counts = Counter(common)
    local = counts["STL"] + counts["LDL"]
    text = (f"{len(common)} common ({counts['FADD'] + counts['FMUL']} FADD/FMUL, {moves} MOV), "
            f"+{restore} restore, +{store} store")
    return text + (f", {local} local" if local else "")


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    kernels = segments(open(sys.argv[1]).read().split("\n"))
    wanted = sys.argv[2:]
    for name, body in kernels.items():
        if wanted and not any(w in name for w in wanted):
            continue
        print(name)
        for index, segment in enumerate(body):
            print(f"  segment {index}: {describe(segment)}")


if __name__ == "__main__":
    main()
