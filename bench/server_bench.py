#!/usr/bin/env python3
"""The numbers of bench/SERVER.md: the patched llama-server's compressed prompt cache against
the same build with --cache-ram-codec none, on the tiny stories models.

  bench/server_bench.py --server OUTDIR/bin/llama-server [--models DIR] [--only held,restore,ttft]

1. held: prompts held in one --cache-ram, per KV type and codec (none, fast, default, max), for
   independent prompts and for prompts sharing a system prompt of 40-45 % of their tokens;
   f32 with flash attention also with --cache-ram-lossy f16-exact. The figure is the median
   of GET /props prompt_cache.prompts over the second half of the sequence (the cache is full).
2. restore: in-server time of a restore (decompression inside load), per MB of raw state, and
   the time a save blocks the request, from the server's own log, with --cache-ram-threads 1
   and 2, against the uncompressed path (codec none: a memcpy).
3. ttft: end-to-end time to first token (n_predict 1, client wall time) of a cache hit on the
   largest prompt the model allows, compressed vs uncompressed vs no cache (re-evaluation).
Medians of repeated runs; the machine is shared and noisy, so read the ratios.
"""
import argparse
import ctypes
import os
import re
import shutil
import statistics
import sys
import tempfile
import time

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "server"))
from stz_server import Server, cache_n, server_args  # noqa: E402
import stz_prompts  # noqa: E402

CODECS = ("none", "fast", "default", "max")
MIB = 1 << 20


class Bench:
    def __init__(self, opts):
        self.o = opts
        self.work = tempfile.mkdtemp(prefix="stz-server-bench-")
        self.n = 0
        self.vocab = None

    def server(self, model, kv, fa, cache_mib, extra=(), ctx=512):
        self.n += 1
        log = os.path.join(self.work, "%03d.log" % self.n)
        return Server(self.o.server, model, server_args(kv, fa, cache_mib, ctx=ctx, extra=extra), log)

    def words(self, srv):
        if self.vocab is None:
            self.vocab = stz_prompts.Vocab(srv)
        return self.vocab


def model_path(opts, name):
    return os.path.join(opts.models, name)


def kv_configs(opts):
    """(label, model, kv, fa, lossy) of every KV type the tests use."""
    m = model_path(opts, "stories260K.gguf")
    mq = model_path(opts, "stories260K-hd32.gguf")
    return [("F16, fa on", m, "f16", 1, None), ("F16, fa off", m, "f16", 0, None),
            ("F32, fa on", m, "f32", 1, None), ("F32, fa on, f16-exact", m, "f32", 1, "f16-exact"),
            ("Q8_0 (hd32), fa on", mq, "q8_0", 1, None)]


def sequence(b, srv, kind, n):
    v = b.words(srv)
    if kind == "independent":
        return stz_prompts.independent_prompts(v, n)
    return stz_prompts.shared_prefix_prompts(v, n)[2]


def held_run(b, model, kv, fa, codec, lossy, kind, n_prompts, cache_mib):
    extra = ["--cache-ram-codec", codec] + (["--cache-ram-lossy", lossy] if lossy else [])
    with b.server(model, kv, fa, cache_mib, extra) as srv:
        seq = sequence(b, srv, kind, n_prompts)
        held, raw = [], []
        for text in seq:
            srv.complete(text, n_predict=4, n_probs=0)
            pc = srv.prompt_cache()
            held.append(pc["prompts"])
            raw.append(pc["raw_bytes"] / max(1, pc["prompts"]))
        tail = held[len(held) // 2:]
        return statistics.median(tail), max(held), statistics.median(raw[len(raw) // 2:])


def entry_mib(b, model, kv, fa, kind):
    """Mean raw size of one cache entry (codec none) for this KV type and kind of prompt."""
    with b.server(model, kv, fa, 1024, ["--cache-ram-codec", "none"]) as srv:
        seq = sequence(b, srv, kind, 3)
        for text in seq:
            srv.complete(text, n_predict=4, n_probs=0)
        pc = srv.prompt_cache()
    return pc["raw_bytes"] / pc["prompts"] / MIB


def bench_held(b):
    print("\n## Prompts held in the same --cache-ram\n")
    print("%d prompts of 300-480 tokens in turn; --cache-ram the whole MiB nearest to %d raw "
          "entries. Median of GET /props prompt_cache.prompts over the second half of the "
          "requests (the cache full), in brackets the maximum.\n" % (b.o.held_prompts, b.o.raw_entries))
    print("| KV, flash attention | prompts | raw entry MiB | --cache-ram MiB | " +
          " | ".join(CODECS) + " | best / none |")
    print("|---|---|---|---|" + "---|" * len(CODECS) + "---|")
    for label, model, kv, fa, lossy in kv_configs(b.o):
        if b.o.configs and not any(x in label for x in b.o.configs.split(";")):
            continue
        for kind in ("independent", "shared"):
            entry = entry_mib(b, model, kv, fa, kind)
            mib = max(1, round(b.o.raw_entries * entry))
            cells, base, best = [], None, 0
            for codec in CODECS:
                med, mx, _ = held_run(b, model, kv, fa, codec, lossy if codec != "none" else None,
                                      kind, b.o.held_prompts, mib)
                if codec == "none":
                    base = med
                else:
                    best = max(best, med)
                cells.append("%g (%d)" % (med, mx))
            ratio = best / base if base else float("nan")
            print("| %s | %s | %.3f | %d | %s | %.2fx |" % (
                label, "independent" if kind == "independent" else "shared 40-45 %",
                entry, mib, " | ".join(cells), ratio))
            sys.stdout.flush()


# The server's own log (-lv 4): the whole prompt-cache step of a request (save the slot's
# state, look up and restore an entry, evict), and the patch's decompression of one entry.
RE_UPDATE = r"prompt cache update took ([0-9.]+) ms"
RE_RESTORE = r"statezip: restored entry of \d+ tokens, ([0-9.]+) MiB from [0-9.]+ MiB held in ([0-9.]+) ms"


def memcpy_ms(n_bytes, repeats=21):
    """The uncompressed path's cost of moving one entry: a memcpy of its bytes, in process."""
    src = ctypes.create_string_buffer(n_bytes)
    dst = ctypes.create_string_buffer(n_bytes)
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        ctypes.memmove(dst, src, n_bytes)
        times.append((time.perf_counter() - t0) * 1000)
    return statistics.median(times)


def update_times(log):
    """'prompt cache update took' per request, in order."""
    return [float(x) for x in re.findall(RE_UPDATE, log)]


def restore_run(b, model, kv, codec, threads):
    """Saves: a sequence of new prompts (each request stores the previous one). Restores: two
    of them in turn (each request stores one and restores the other). A pause after each request
    lets the background compression finish, as it would between a user's turns."""
    extra = ["--cache-ram-codec", codec]
    if codec != "none":
        extra += ["--cache-ram-threads", str(threads)]
    with b.server(model, kv, 1, 1024, extra) as srv:
        seq = sequence(b, srv, "independent", b.o.repeats + 1)
        for text in seq:
            srv.complete(text, n_predict=1, n_probs=0)
            time.sleep(0.1)
        n_saves = len(update_times(srv.log_text()))
        for i in range(2 * b.o.repeats):
            srv.complete(seq[i % 2], n_predict=1, n_probs=0)
            time.sleep(0.1)
        log = srv.log_text()
    updates = update_times(log)
    saves, hits = updates[2:n_saves], updates[n_saves + 2:]  # skip the first of each phase
    restores = [(float(m), float(ms)) for m, ms in re.findall(RE_RESTORE, log)]
    return saves, hits, restores


def bench_restore(b):
    print("\n## Restore and save inside the server\n")
    print("stories260K, flash attention on, independent prompts of 300-480 tokens, %d requests "
          "per phase; medians. *restore*: the patch's decompression of one entry inside load "
          "(its log line); *memcpy*: copying the same bytes in process (what the uncompressed "
          "path costs at most); *save blocks*: the whole prompt-cache step of a request that "
          "only stores the previous prompt (copy out, queue compression); *hit step*: the step "
          "of a request that stores one entry and restores another.\n" % b.o.repeats)
    print("| KV | codec | threads | raw MB | restore ms | ms per MB raw | x memcpy | "
          "save blocks ms | x none | hit step ms | x none |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    m = model_path(b.o, "stories260K.gguf")
    for kv in ("f16", "f32"):
        base_save = base_hit = None
        for codec in CODECS:
            for threads in ((0,) if codec == "none" else (1, 2)):
                saves, hits, restores = restore_run(b, m, kv, codec, threads)
                save, hit = statistics.median(saves), statistics.median(hits)
                if codec == "none":
                    base_save, base_hit = save, hit
                if restores:
                    raw_mb = statistics.median(r[0] for r in restores) * MIB / 1e6
                    rms = statistics.median(r[1] for r in restores)
                    cells = "%.3f | %.3f | %.3f | %.1f" % (raw_mb, rms, rms / raw_mb,
                                                          rms / memcpy_ms(int(raw_mb * 1e6)))
                else:
                    cells = "- | - | - | -"
                print("| %s | %s | %s | %s | %.3f | %.2f | %.3f | %.2f |" % (
                    kv, codec, threads or "-", cells, save, save / base_save, hit, hit / base_hit))
                sys.stdout.flush()


def bench_ttft(b):
    print("\n## Time to first token of a cache hit, largest prompt\n")
    m = model_path(b.o, "stories260K.gguf")
    runs = [("no cache (re-evaluation)", ["--cache-ram-codec", "none"], 0),
            ("uncompressed (codec none)", ["--cache-ram-codec", "none"], 1024)]
    runs += [("codec %s" % c, ["--cache-ram-codec", c], 1024) for c in CODECS[1:]]
    print("| KV | path | TTFT ms (median of %d) | x uncompressed | cache_n |" % b.o.repeats)
    print("|---|---|---|---|---|")
    for kv in ("f16", "f32"):
        base = None
        for label, extra, mib in runs:
            with b.server(m, kv, 1, mib, extra) as srv:
                v = b.words(srv)
                big, other = stz_prompts.independent_prompts(v, 2, (b.o.ttft_tokens, b.o.ttft_tokens))
                times, cached = [], []
                srv.complete(big, n_predict=1, n_probs=0)
                for _ in range(b.o.repeats):
                    srv.complete(other, n_predict=1, n_probs=0)  # the big prompt leaves the slot
                    t0 = time.perf_counter()
                    r = srv.complete(big, n_predict=1, n_probs=0)
                    times.append((time.perf_counter() - t0) * 1000)
                    cached.append(cache_n(r))
            med = statistics.median(times)
            if label.startswith("uncompressed"):
                base = med
            print("| %s | %s | %.2f | %s | %d |" % (kv, label, med,
                  "%.2f" % (med / base) if base else "-", statistics.median(cached)))
            sys.stdout.flush()


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--server", required=True)
    p.add_argument("--models", default=os.path.join(HERE, "..", "..", "shared", "models"))
    p.add_argument("--only", default="held,restore,ttft")
    p.add_argument("--raw-entries", type=int, default=8,
                   help="--cache-ram holds about this many uncompressed entries")
    p.add_argument("--held-prompts", type=int, default=48)
    p.add_argument("--configs", default="", help="held: only the KV rows whose label contains "
                   "one of these ;-separated strings (e.g. 'F16, fa on')")
    p.add_argument("--keep", action="store_true", help="keep the servers' logs")
    p.add_argument("--repeats", type=int, default=9)
    p.add_argument("--ttft-tokens", type=int, default=500)
    opts = p.parse_args()
    b = Bench(opts)
    print("# command: %s" % " ".join(sys.argv))
    for part in opts.only.split(","):
        {"held": bench_held, "restore": bench_restore, "ttft": bench_ttft}[part](b)
    if opts.keep:
        print("\nlogs: %s" % b.work)
    else:
        shutil.rmtree(b.work, ignore_errors=True)


if __name__ == "__main__":
    main()
