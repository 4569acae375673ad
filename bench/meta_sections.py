#!/usr/bin/env python3
"""Bytes of the metadata sections (`cells`, `tokens`) with statezip against `xz -9e` of each
section extracted from the file, per corpus file.

    bench/meta_sections.py [--build build] [--preset default] [FOLDER_OR_FILE ...]

Inputs: the given folders/files, else the folders in $STATEZIP_CORPUS (':'-separated); every
.bin below a folder. Each file is compressed with the preset (`statezip -c`), the .stz's section
list (`statezip inspect --json`) gives each section's kind, range and stored bytes (its chunks'
payloads); each `cells` and `tokens` section is cut from the original file and compressed by
`xz -9e -T1` on its own (its .xz container counted, as a user comparing would), and as raw
LZMA2 9e without that container (python's lzma module; ~60 bytes less on these sizes), the
stricter reference. A row per file and kind sums that file's sections of the kind; the last
column marks rows where statezip stores more than xz -9e, or more than raw LZMA2.
"""
import argparse, json, lzma, os, subprocess, sys, tempfile

KINDS = ("cells", "tokens")


def files_of(paths):
    out = []
    for p in paths:
        if os.path.isdir(p):
            for root, dirs, names in os.walk(p):
                dirs.sort()
                out += [os.path.join(root, n) for n in sorted(names) if n.endswith(".bin")]
        elif os.path.isfile(p):
            out.append(p)
    return sorted(set(out), key=out.index)


def xz_bytes(data):
    return len(subprocess.run(["xz", "-9e", "-T1", "-c"], input=data, capture_output=True, check=True).stdout)


def lzma2_raw_bytes(data):
    """Raw LZMA2 preset 9e (what xz -9e writes without its .xz container: ~60 bytes less)."""
    filters = [{"id": lzma.FILTER_LZMA2, "preset": 9 | lzma.PRESET_EXTREME, "dict_size": max(4096, len(data))}]
    return len(lzma.compress(data, format=lzma.FORMAT_RAW, filters=filters))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("inputs", nargs="*")
    ap.add_argument("--build", default="build")
    ap.add_argument("--preset", default="default", choices=["fast", "default", "max"])
    ap.add_argument("--codec", default="", help="passed to statezip --codec (e.g. meta=deltarun+zstd:19)")
    args = ap.parse_args()
    stz = os.path.join(args.build, "statezip")
    roots = args.inputs or [p for p in os.environ.get("STATEZIP_CORPUS", "").split(":") if p]
    files = files_of(roots)
    if not files:
        sys.exit("no inputs: give folders or files, or set STATEZIP_CORPUS")
    total = {k: [0, 0, 0, 0, 0, 0] for k in KINDS}  # raw, statezip, xz, files over, lzma2 raw, files over it
    print(f"{'file':60} {'kind':6} {'n':>3} {'raw':>8} {'statezip':>9} {'xz -9e':>8} {'lzma2':>8}  over")
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "f.stz")
        for f in files:
            subprocess.run([stz, "-c", "-q", "-T1", "--preset", args.preset] + (["--codec", args.codec] if args.codec else []) + [f], stdout=open(out, "wb"), check=True)
            info = json.loads(subprocess.run([stz, "inspect", "--json", out], capture_output=True, check=True,
                                             text=True).stdout)
            data = open(f, "rb").read()
            for kind in KINDS:
                secs = [s for s in info["sections"] if s["kind"] == kind]
                if not secs:
                    continue
                raw = sum(s["bytes"] for s in secs)
                ours = sum(s["stored"] for s in secs)
                theirs = sum(xz_bytes(data[s["offset"]:s["offset"] + s["bytes"]]) for s in secs)
                bare = sum(lzma2_raw_bytes(data[s["offset"]:s["offset"] + s["bytes"]]) for s in secs)
                over = ours > theirs
                t = total[kind]
                t[0] += raw; t[1] += ours; t[2] += theirs; t[3] += over; t[4] += bare; t[5] += ours > bare
                name = os.path.relpath(f, os.path.dirname(os.path.commonpath(roots))) if roots else f
                print(f"{name[-60:]:60} {kind:6} {len(secs):3} {raw:8} {ours:9} {theirs:8} {bare:8}  "
                      f"{'OVER xz' if over else 'over lzma2' if ours > bare else ''}")
    print()
    for kind, (raw, ours, theirs, over, bare, over_bare) in total.items():
        print(f"total {kind:6}: raw {raw} B, statezip {args.preset} {ours} B, xz -9e {theirs} B "
              f"(raw LZMA2 9e without the .xz container {bare} B); files where statezip is larger than xz -9e: {over}, "
              f"than raw LZMA2: {over_bare}")


if __name__ == "__main__":
    main()
