#!/usr/bin/env python3
"""Benchmark statezip against the system zstd, xz and lz4 on real state files, in one run,
and write bench/RESULTS.md.

    bench/run.py [--build build] [--runs 3] [--min-time 10] [--out bench/RESULTS.md] [FOLDER_OR_FILE ...]

Inputs: the given folders/files, else the folders in $STATEZIP_CORPUS (':'-separated), else
the bundled sample. Every .bin below a folder is used. For each file, `statezip bench --json
--sections` measures statezip's presets and base pipelines and the system tools (zstd -3,
zstd -19, xz -9, lz4 -1, lz4 -9) on the same bytes, each round trip verified. The per-type
table compares the K/V sections only: statezip's stored bytes for those sections (from its
section breakdown) against the system tools run on the same sections extracted from each file.
Timings are medians of --runs runs after a warm-up; ratios are what to compare across machines.
"""
import argparse, collections, datetime, json, os, platform, subprocess, sys, tempfile, time

PIPELINES = ["fast", "default", "max", "lz4", "zstd:3", "zstd:19", "lzma:9", "shuffle+zstd:3"]
TOOLS = [("zstd -3", ["zstd", "-3", "-T1", "-q", "-c"], ["zstd", "-d", "-q", "-c"]),
         ("zstd -19", ["zstd", "-19", "-T1", "-q", "-c"], ["zstd", "-d", "-q", "-c"]),
         ("xz -9", ["xz", "-9", "-T1", "-c"], ["xz", "-d", "-c"]),
         ("lz4 -1", ["lz4", "-1", "-q", "-c"], ["lz4", "-d", "-q", "-c"])]


def files_of(args):
    paths = args.inputs or [p for p in os.environ.get("STATEZIP_CORPUS", "").split(":") if p]
    out, seen = [], set()
    # Each file once: a folder inside another one given (corpus/v040 beside corpus) is walked
    # from both, and a file counted twice weighs twice in its folder's and its type's totals.
    def add(f):
        real = os.path.realpath(f)
        if real not in seen:
            seen.add(real)
            out.append(f)
    for p in paths:
        if os.path.isdir(p):
            for root, _, names in sorted(os.walk(p)):
                for n in sorted(names):
                    if n.endswith(".bin"):
                        add(os.path.join(root, n))
        elif os.path.isfile(p):
            add(p)
    return out


def folder_of(f, roots):
    for r in roots:
        if os.path.isdir(r) and os.path.abspath(f).startswith(os.path.abspath(r) + os.sep):
            rel = os.path.relpath(os.path.dirname(f), r)
            return os.path.basename(os.path.abspath(r)) + ("" if rel == "." else "/" + rel)
    return os.path.dirname(f)


def timed(cmd, stdin_path, stdout_path):
    with open(stdin_path, "rb") as i, open(stdout_path, "wb") as o:
        t = time.perf_counter()
        subprocess.run(cmd, stdin=i, stdout=o, check=True)
        return time.perf_counter() - t


def tools_on_bytes(data, runs, tmp):
    """Compressed size and median times of each system tool on `data`."""
    src, comp, back = (os.path.join(tmp, n) for n in ("s", "c", "d"))
    with open(src, "wb") as f:
        f.write(data)
    res = {}
    for name, c, d in TOOLS:
        ct, dt = [], []
        for r in range(runs + 1):
            a, b = timed(c, src, comp), timed(d, comp, back)
            if r:
                ct.append(a), dt.append(b)
        with open(back, "rb") as f:
            assert f.read() == data, name + " did not round-trip"
        ct.sort(), dt.sort()
        res[name] = (os.path.getsize(comp), ct[len(ct) // 2], dt[len(dt) // 2])
    return res


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("inputs", nargs="*")
    ap.add_argument("--build", default="build")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--min-time", type=float, default=10, help="ms a timed run of a statezip pipeline lasts at least")
    ap.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "RESULTS.md"))
    args = ap.parse_args()
    stz = os.path.join(args.build, "statezip")
    files = files_of(args)
    if not files:
        files = [os.path.join(os.path.dirname(__file__), "..", "tests", "data", "ggsq3.stories260K.f16.fa1.c1024.t322.bin")]
    roots = args.inputs or [p for p in os.environ.get("STATEZIP_CORPUS", "").split(":") if p]
    per_file = []
    kv = collections.defaultdict(lambda: collections.defaultdict(lambda: [0, 0, 0.0, 0.0]))  # type -> method -> raw, packed, ct, dt
    speed_by_type = collections.defaultdict(lambda: collections.defaultdict(lambda: [0, 0.0, 0.0]))
    bound_by_type = collections.defaultdict(lambda: [0, 0.0])  # float type -> K/V bytes, bound bytes
    with tempfile.TemporaryDirectory() as tmp:
        for n, f in enumerate(files, 1):
            print(f"[{n}/{len(files)}] {f}", file=sys.stderr)
            out = subprocess.run([stz, "bench", "--json", "--sections", "--runs", str(args.runs),
                                  "--min-time", str(args.min_time),
                                  "--pipelines", ",".join(PIPELINES), f], capture_output=True, check=True, text=True)
            fr = json.loads(out.stdout)["files"][0]
            fr["folder"] = folder_of(f, roots)
            per_file.append(fr)
            # K/V sections, grouped by type, for the per-type comparison.
            insp = json.loads(subprocess.run([stz, "inspect", "--json", f], capture_output=True, check=True, text=True).stdout)
            data = open(f, "rb").read()
            by_type = collections.defaultdict(bytearray)
            for s in insp["sections"]:
                if s["kind"] in ("kv-key", "kv-value"):
                    by_type[s["type"]] += data[s["offset"]:s["offset"] + s["bytes"]]
            types = set(by_type)
            for t, blob in by_type.items():
                for name, (size, ct, dt) in tools_on_bytes(bytes(blob), args.runs, tmp).items():
                    acc = kv[t][name]
                    acc[0] += len(blob); acc[1] += size; acc[2] += ct; acc[3] += dt
            for r in fr["results"]:
                if r["external"]:
                    continue
                for key, g in r.get("sections", {}).items():
                    if "/" in key:
                        t = key.split("/")[1]
                        acc = kv[t]["statezip " + r["pipeline"]]
                        acc[0] += g["bytes"]; acc[1] += g["compressed_bytes"]
                if len(types) == 1 and r["pipeline"] == "default" and fr.get("float_kv_bytes"):
                    b = bound_by_type[next(iter(types))]
                    b[0] += fr["float_kv_bytes"]; b[1] += fr["float_kv_bound_bytes"]
                if len(types) == 1:  # speed of whole files whose K/V are all one type
                    sp = speed_by_type[next(iter(types))]["statezip " + r["pipeline"]]
                    sp[0] += fr["bytes"]; sp[1] += fr["bytes"] / 1e6 / r["compress_mbps"]; sp[2] += fr["bytes"] / 1e6 / r["decompress_mbps"]
    write_results(args, files, per_file, kv, speed_by_type, bound_by_type)


def write_results(args, files, per_file, kv, speed_by_type, bound_by_type):
    cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), platform.processor())
    L = ["# Benchmark results", "",
         f"Command: `{' '.join(['bench/run.py'] + sys.argv[1:])}`" + (f" with `STATEZIP_CORPUS={os.environ.get('STATEZIP_CORPUS')}`" if os.environ.get("STATEZIP_CORPUS") and not args.inputs else ""),
         f"Date: {datetime.date.today()}; machine: {os.cpu_count()} cores, {cpu}; single-threaded (`-T1`, tools with `-T1`).",
         f"Timed runs per measurement: {args.runs} after one warm-up, median. statezip is timed in-process (no I/O), each run",
         f"repeating the call back to back until it lasts {args.min_time:g} ms (the mean of those calls is the run's time; as",
         "zstd's own benchmark does: one call on a small file is within the machine's jitter); the system",
         "tools as processes on files in a temp folder (their start-up is included, which penalises them on small files).",
         "Ratio = original bytes / compressed bytes. MB/s = original bytes per second. ×zstd:3 = speed as a multiple of",
         "statezip's in-process `zstd:3` measured in the same run on the same bytes (the fair speed reference on a",
         "shared, noisy machine); within each run every statezip pipeline is timed in turn, so a drifting machine",
         "speed weighs on all of them alike.", ""]
    # Totals per folder
    L += ["## Totals per corpus folder", ""]
    folders = sorted({fr["folder"] for fr in per_file})
    methods = [r["pipeline"] for r in per_file[0]["results"]]
    L.append("| method | " + " | ".join(f"{fo} ratio | {fo} comp MB/s (×zstd:3) | {fo} decomp MB/s (×zstd:3)"
                                       for fo in folders) + " |")
    L.append("|---|" + "---|---|---|" * len(folders))

    def folder_totals(m, fo):
        raw = packed = ct = dt = 0
        for fr in per_file:
            if fr["folder"] != fo:
                continue
            r = next(x for x in fr["results"] if x["pipeline"] == m)
            raw += fr["bytes"]; packed += r["compressed_bytes"]
            ct += fr["bytes"] / 1e6 / r["compress_mbps"]; dt += fr["bytes"] / 1e6 / r["decompress_mbps"]
        return raw, packed, ct, dt

    for m in methods:
        cells = []
        for fo in folders:
            raw, packed, ct, dt = folder_totals(m, fo)
            _, _, zct, zdt = folder_totals("zstd:3", fo) if "zstd:3" in methods else (0, 0, 0, 0)
            rel = lambda t, z: f" ({z / t:.2f}×)" if z else ""
            cells.append(f"{raw / packed:.4f} | {raw / 1e6 / ct:.1f}{rel(ct, zct)} | {raw / 1e6 / dt:.1f}{rel(dt, zdt)}")
        L.append(f"| {m} | " + " | ".join(cells) + " |")
    L += ["", "Published peer totals on the current corpus (../shared/docs/baselines.md, not re-run here): OpenZL 0.2.3",
          "with a hand-written SDDL2 description + `zli train` 1.239; OpenZL untrained 1.226; OpenZL le-u16 profile 1.148."]
    L += ["", "Bytes: " + ", ".join(f"{fo} {sum(fr['bytes'] for fr in per_file if fr['folder'] == fo):,} in "
                                   f"{sum(1 for fr in per_file if fr['folder'] == fo)} files" for fo in folders), ""]
    # Per type
    L += ["## K and V sections by KV type", "",
          "statezip: stored bytes of the K/V sections when compressing whole files. System tools: run on the K/V",
          "sections of each file, extracted per type. Speeds of statezip: whole files whose K and V are all of that",
          "type (metadata included); of the tools: on the extracted sections.", ""]
    L.append("| type | K+V bytes | method | ratio | vs xz -9 bytes | comp MB/s (×zstd:3) | decomp MB/s (×zstd:3) |")
    L.append("|---|---|---|---|---|---|---|")
    for t in sorted(kv):
        xz = kv[t].get("xz -9")
        for m in sorted(kv[t], key=lambda m: -kv[t][m][0] / max(1, kv[t][m][1])):
            raw, packed, ct, dt = kv[t][m]
            if m.startswith("statezip"):
                sp, z = speed_by_type[t].get(m), speed_by_type[t].get("statezip zstd:3")
                rel = lambda i: f" ({z[i] / sp[i]:.2f}×)" if z and z[i] else ""
                cs = f"{sp[0] / 1e6 / sp[1]:.1f}{rel(1)}" if sp and sp[1] else "–"
                ds = f"{sp[0] / 1e6 / sp[2]:.1f}{rel(2)}" if sp and sp[2] else "–"
            else:
                cs, ds = f"{raw / 1e6 / ct:.1f}", f"{raw / 1e6 / dt:.1f}"
            vs = f"{packed / xz[1]:.3f}" if xz else "–"
            L.append(f"| {t} | {raw:,} | {m} | {raw / packed:.4f} | {vs} | {cs} | {ds} |")
        if t in bound_by_type:
            raw, bound = bound_by_type[t]
            L.append(f"| {t} | {raw:,} | per-channel order-0 bound (files of this type only) | {raw / bound:.4f} | | | |")
    # Per file
    L += ["", "## Per file (ratio)", "", "| folder | file | bytes | " + " | ".join(methods) + " |",
          "|---|---|---|" + "---|" * len(methods)]
    for fr in per_file:
        rs = {r["pipeline"]: r for r in fr["results"]}
        L.append(f"| {fr['folder']} | {os.path.basename(fr['file'])} | {fr['bytes']:,} | " +
                 " | ".join(f"{rs[m]['ratio']:.3f}" for m in methods) + " |")
    scale = os.path.join(os.path.dirname(args.out), "scale.md")
    if os.path.exists(scale):
        L += ["", "## Scale: time and memory against input size", "",
              "Command: `bench/scale.sh build` (generated session v10 files, 32 layers x 1024-wide f16 K/V, by `stz-gen`;",
              "peak RSS from `/usr/bin/time`). Synthetic values, so the ratio is not comparable with the corpus.", ""]
        L += open(scale).read().strip().splitlines()
    with open(args.out, "w") as f:
        f.write("\n".join(L) + "\n")
    print(f"wrote {args.out}", file=sys.stderr)


if __name__ == "__main__":
    main()
