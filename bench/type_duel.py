#!/usr/bin/env python3
"""statezip against its in-process zstd:3 per KV type, call by call: the same library loaded
twice by bench/lib_duel.c, once with a preset and once with `zstd:3`, the two taking turns on
every call (bench/RESULTS.md times each pipeline for 10 ms in turn instead; on a machine whose
speed drifts, turns of one call keep the drift off the ratio).

    bench/type_duel.py [--build build] [--preset default] [--mode d] [--runs 30] [FOLDER_OR_FILE ...]

Inputs as bench/run.py's (the folders in $STATEZIP_CORPUS by default). A file counts for a type
when all its K and V sections are of that type (`statezip inspect --json`); files of mixed
types are left out. Prints a Markdown table: per type, the files, their bytes, and statezip's
speed as a multiple of zstd:3's, from the sums over the files of each library's fastest and of
its median call (lib_duel's two figures).
"""
import argparse, collections, json, os, subprocess, sys, tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from run import files_of  # noqa: E402  (the same inputs as the main benchmark)

KV_KINDS = {"kv-key", "kv-value"}


def kv_type(statezip, path):
    """The one type of the file's K and V sections, or None (none, or several)."""
    info = json.loads(subprocess.run([statezip, "inspect", "--json", path], check=True, capture_output=True).stdout)
    types = {s["type"] for s in info["sections"] if s["kind"] in KV_KINDS}
    return types.pop() if len(types) == 1 else None


def duel(binary, lib, preset, mode, runs, files):
    """(fastest, median) multiples of zstd:3 over `files`."""
    out = subprocess.run([binary, mode, str(runs), f"{lib}={preset}", f"{lib}=zstd:3", "--", *files],
                         check=True, capture_output=True, text=True).stdout.splitlines()
    speeds = [(float(line.split()[2]), float(line.split()[5])) for line in out]
    return speeds[0][0] / speeds[1][0], speeds[0][1] / speeds[1][1]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default="build")
    ap.add_argument("--preset", default="default", choices=["fast", "default", "max"])
    ap.add_argument("--mode", default="d", choices=["d", "c"], help="d: decompression, c: compression")
    ap.add_argument("--runs", type=int, default=30)
    ap.add_argument("inputs", nargs="*")
    args = ap.parse_args()
    statezip = os.path.join(args.build, "statezip")
    lib = os.path.abspath(os.path.join(args.build, "libstatezip.so"))
    here = os.path.dirname(os.path.abspath(__file__))
    by_type = collections.defaultdict(list)
    for f in files_of(args):
        t = kv_type(statezip, f)
        if t:
            by_type[t].append(f)
    with tempfile.TemporaryDirectory() as tmp:
        binary = os.path.join(tmp, "lib_duel")
        subprocess.run(["cc", "-O2", "-o", binary, os.path.join(here, "lib_duel.c"), "-I" + os.path.join(here, "..", "include"),
                        "-I" + os.path.join(args.build, "include"), "-ldl"], check=True)
        what = "decompression" if args.mode == "d" else "compression"
        print(f"| type | files | bytes | {args.preset} {what}, ×zstd:3 (fastest calls) | (median calls) |")
        print("|---|---|---|---|---|")
        for t in sorted(by_type):
            files = by_type[t]
            fastest, median = duel(binary, lib, args.preset, args.mode, args.runs, files)
            size = sum(os.path.getsize(f) for f in files)
            print(f"| {t} | {len(files)} | {size:,} | {fastest:.2f}× | {median:.2f}× |", flush=True)


if __name__ == "__main__":
    main()
