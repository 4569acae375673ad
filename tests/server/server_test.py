#!/usr/bin/env python3
"""The patched llama-server against a reference server of the same build (--cache-ram-codec
none) on one request sequence. Exit 0 pass, 1 fail, 77 skipped (models absent).

  server_test.py CASE --server BIN --model GGUF --kv TYPE --fa 0|1 --work DIR [--statezip BIN]
  CASE: cache-all | cache-small | slots | damage | lossy
"""
import argparse
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from stz_server import (SKIP, Server, ServerError, answer, cache_n, first_difference,  # noqa: E402
                        server_args)
import stz_prompts  # noqa: E402

N_PROMPTS = 8   # prompts sharing a system prompt of 40-45 % of their tokens
N_REPEATS = 4   # then the first N_REPEATS again
N_PREDICT = 12
BIG_CACHE_MIB = 1024
SETTLE_S = 0.2  # pause after each request of cache-small
DAMAGE_WARNING = "statezip: dropping prompt cache entry"


class Failure(Exception):
    pass


def check(cond, msg):
    if not cond:
        raise Failure(msg)


class Case:
    def __init__(self, opts):
        self.o = opts
        self.work = opts.work
        self.n_started = 0

    def server(self, name, cache_mib, extra=(), env=None):
        self.n_started += 1
        log = os.path.join(self.work, "%02d-%s.log" % (self.n_started, name))
        args = server_args(self.o.kv, self.o.fa, cache_mib, extra=extra)
        return Server(self.o.server, self.o.model, args, log, env=env)

    def prompts(self, srv, n_prompts=N_PROMPTS):
        """n_prompts prompts sharing a system prompt, then the first N_REPEATS again."""
        vocab = stz_prompts.Vocab(srv)
        shared, lengths, texts = stz_prompts.shared_prefix_prompts(vocab, n_prompts)
        stz_prompts.check_lengths(srv, texts, lengths)
        frac = [shared / t for t in lengths]
        check(all(0.40 <= f <= 0.45 for f in frac), "shared fractions %s" % frac)
        check(all(300 <= t <= 480 for t in lengths), "prompt lengths %s" % lengths)
        self.shared = shared
        self.n_prompts = n_prompts
        self.lengths = lengths + lengths[:N_REPEATS]
        return texts + texts[:N_REPEATS]

    def is_hit(self, i, resp):
        # A prompt of n words is BOS + n tokens; a cache hit re-evaluates only the last one. A
        # miss reuses the system prompt, which the slot keeps from the previous prompt.
        return cache_n(resp) >= self.lengths[i]

    def hits(self, responses):
        return [i for i in range(self.n_prompts, len(responses)) if self.is_hit(i, responses[i])]

    def run_sequence(self, srv, sequence, pause=0.0):
        out, held = [], []
        for text in sequence:
            out.append(srv.complete(text, n_predict=N_PREDICT))
            time.sleep(pause)
            held.append(srv.prompt_cache())
        check(srv.alive(), "server died during the sequence")
        return out, held

    def compare(self, seq, got, *references):
        """Every response equals a reference response to the same prompt that reused the same
        number of cached tokens (the same computation): prompt evaluation in other batch
        shapes changes the last bits of the logits, so a hit is compared with a hit."""
        table = {}
        for ref in references:
            for text, r in zip(seq, ref):
                if r is not None:
                    table.setdefault((text, cache_n(r)), r)
        for i, (text, r) in enumerate(zip(seq, got)):
            check(r.get("completion_probabilities"), "request %d: no probabilities returned" % i)
            ref = table.get((text, cache_n(r)))
            check(ref is not None, "request %d: cache_n %d, no reference response reused as many "
                  "tokens (reference cache_n %s)" % (i, cache_n(r), [cache_n(x[i]) for x in references if x[i]]))
            d = first_difference(answer(ref), answer(r))
            check(d is None, "request %d differs from the reference: %s" % (i, d))
        print("all %d responses identical to the reference's" % len(got))


def codec_extra(opts):
    extra = []
    if opts.codec:
        extra += ["--cache-ram-codec", opts.codec]
    return extra


def expect_prompt_cache(pc, codec, what):
    check(isinstance(pc, dict), "%s: GET /props has no prompt_cache object" % what)
    for key in ("prompts", "bytes", "raw_bytes", "codec"):
        check(key in pc, "%s: prompt_cache lacks %r: %s" % (what, key, pc))
    if codec is not None:
        check(pc["codec"] == codec, "%s: codec %r, expected %r" % (what, pc["codec"], codec))


def case_cache_all(c, lossy=None):
    """A cache large enough for every entry: the patched server serves at least the repeats the
    reference serves, holds the entries compressed, and answers exactly as the reference."""
    extra = codec_extra(c.o) + (["--cache-ram-lossy", lossy] if lossy else [])
    with c.server("patched", BIG_CACHE_MIB, extra) as srv:
        seq = c.prompts(srv)
        got, held = c.run_sequence(srv, seq)
    with c.server("reference", BIG_CACHE_MIB, ["--cache-ram-codec", "none"]) as srv:
        ref, ref_held = c.run_sequence(srv, seq)
    hits_ref, hits_got = c.hits(ref), c.hits(got)
    print("repeats served from cache: reference %s, patched %s" % (hits_ref, hits_got))
    print("cache_n reference %s" % [cache_n(r) for r in ref])
    print("cache_n patched   %s" % [cache_n(r) for r in got])
    check(len(hits_ref) == N_REPEATS, "the reference served only repeats %s from its cache: "
          "the prompts do not exercise the cache as intended" % hits_ref)
    check(set(hits_ref) <= set(hits_got),
          "repeats %s were hits on the reference but not on the patched server" % hits_ref)
    c.compare(seq, got, ref)
    pc, rpc = held[N_PROMPTS - 1], ref_held[N_PROMPTS - 1]
    expect_prompt_cache(pc, c.o.codec, "patched")
    expect_prompt_cache(rpc, "none", "reference")
    print("after %d prompts: patched %s; reference %s" % (N_PROMPTS, pc, rpc))
    check(rpc["bytes"] == rpc["raw_bytes"], "codec none holds %s" % rpc)
    check(pc["prompts"] == rpc["prompts"] == N_PROMPTS - 1,
          "patched holds %d prompts, reference %d" % (pc["prompts"], rpc["prompts"]))
    check(pc["raw_bytes"] == rpc["raw_bytes"], "raw bytes differ: %s vs %s" % (pc, rpc))
    check(pc["bytes"] < pc["raw_bytes"], "the patched cache is not compressed: %s" % pc)


def entry_raw_bytes(c, seq):
    """The raw size of one cache entry of this KV type, read from a codec none server."""
    with c.server("measure", BIG_CACHE_MIB, ["--cache-ram-codec", "none"]) as srv:
        srv.complete(seq[0], n_predict=N_PREDICT)
        srv.complete(seq[1], n_predict=N_PREDICT)
        pc = srv.prompt_cache()
    expect_prompt_cache(pc, "none", "measure")
    check(pc["prompts"] == 1, "one entry expected after two prompts: %s" % pc)
    return pc["raw_bytes"]


def case_cache_small(c):
    """A --cache-ram that holds k uncompressed entries: the patched server holds more, serves
    at least the reference's hits, and every answer is the reference's for the same path (a
    hit the small reference cannot serve is compared with a large reference's hit)."""
    with c.server("vocab", BIG_CACHE_MIB, ["--cache-ram-codec", "none"]) as srv:
        entry = entry_raw_bytes(c, c.prompts(srv))
        mib = 1 << 20
        limit = max(1, -(-int(2.5 * entry) // mib))  # smallest whole MiB holding >= 2 raw entries
        k = limit * mib // entry
        # k + 3 prompts: the reference has evicted the first ones when they come again, a
        # cache holding k + 2 entries (of the k + 2 before the last) still serves some
        seq = c.prompts(srv, k + 3)
    print("raw entry %.3f MiB: --cache-ram %d MiB holds %d raw entries; %d prompts"
          % (entry / mib, limit, k, c.n_prompts))
    with c.server("reference-large", BIG_CACHE_MIB, ["--cache-ram-codec", "none"]) as srv:
        ref_large, _ = c.run_sequence(srv, seq)
    # A pause after each request, as between a user's turns, lets the background compression
    # of the entry just stored finish: what is held then does not depend on the machine's load.
    with c.server("patched", limit, codec_extra(c.o)) as srv:
        got, held = c.run_sequence(srv, seq, pause=SETTLE_S)
    with c.server("reference", limit, ["--cache-ram-codec", "none"]) as srv:
        ref, ref_held = c.run_sequence(srv, seq, pause=SETTLE_S)
    # The limit counts the newest entry still being compressed at its expected size while it is
    # held raw: the bytes held may exceed --cache-ram by at most that entry's raw size less its
    # estimate, so by less than the raw size of the largest entry (the README's bound).
    largest = -(-entry * max(c.lengths) // c.lengths[0])
    for pc in held:
        expect_prompt_cache(pc, c.o.codec, "patched")
        check(pc["bytes"] <= limit * mib + largest, "held %d bytes, more than the %d MiB limit "
              "and one raw entry (%d bytes)" % (pc["bytes"], limit, largest))
    n_got = max(pc["prompts"] for pc in held)
    n_ref = max(pc["prompts"] for pc in ref_held)
    print("prompts held: patched %s, reference %s" % ([pc["prompts"] for pc in held],
                                                       [pc["prompts"] for pc in ref_held]))
    print("cache_n reference %s" % [cache_n(r) for r in ref])
    print("cache_n patched   %s" % [cache_n(r) for r in got])
    check(k - 1 <= n_ref <= k, "the reference held %d entries, %d expected" % (n_ref, k))
    check(n_got > n_ref, "the patched server holds %d prompts, the reference %d" % (n_got, n_ref))
    print("repeats served from cache: reference %s, patched %s" % (c.hits(ref), c.hits(got)))
    check(set(c.hits(ref)) <= set(c.hits(got)), "a reference hit is a patched miss")
    c.compare(seq, got, ref, ref_large)


def case_lossy(c):
    """--cache-ram-lossy f16-exact on an f32 flash-attention cache: identical probabilities."""
    check(c.o.kv == "f32" and c.o.fa, "f16-exact is meant for f32 caches with flash attention")
    case_cache_all(c, lossy="f16-exact")


def case_damage(c):
    """One stored entry has a byte of its blob flipped (the test hook LLAMA_STZ_TEST_DAMAGE=N:
    the N-th entry to enter the cache): it is dropped with the warning and served as a miss,
    the answers stay the reference's, the server keeps serving. N=2 damages an entry nothing
    depends on: every other repeat stays a hit. N=1 damages the first entry, which the later
    ones may be stored against: those may be dropped too, but never served wrong."""
    with c.server("reference", BIG_CACHE_MIB, ["--cache-ram-codec", "none"]) as srv:
        seq = c.prompts(srv)
        ref, _ = c.run_sequence(srv, seq)
    # Misses: a server without a prompt cache (the slot keeps the system prompt), and fresh
    # evaluations of each repeat (in case the server clears the slot on a failed load).
    with c.server("reference-nocache", 0, ["--cache-ram-codec", "none"]) as srv:
        miss, _ = c.run_sequence(srv, seq)
    fresh = [None] * len(seq)
    with c.server("reference-fresh", 0, ["--cache-ram-codec", "none"]) as srv:
        for i in range(c.n_prompts, len(seq)):
            fresh[i] = srv.complete(seq[i], n_predict=N_PREDICT, cache_prompt=False)
    print("cache_n reference %s" % [cache_n(r) for r in ref])
    check(c.hits(ref) == list(range(c.n_prompts, len(seq))),
          "the reference did not serve every repeat from cache: %s" % c.hits(ref))
    for n in (2, 1):
        with c.server("patched-damage%d" % n, BIG_CACHE_MIB, codec_extra(c.o),
                      env={"LLAMA_STZ_TEST_DAMAGE": str(n)}) as srv:
            got, _ = c.run_sequence(srv, seq)
            log = srv.log_text()
        damaged = c.n_prompts + n - 1  # the repeat of the prompt whose entry was damaged
        print("damage %d: cache_n patched %s; %d warnings" % (n, [cache_n(r) for r in got],
                                                              log.count(DAMAGE_WARNING)))
        check(DAMAGE_WARNING in log, "damage %d: no %r warning in the log" % (n, DAMAGE_WARNING))
        check(not c.is_hit(damaged, got[damaged]), "damage %d: the damaged entry was served "
              "as a hit" % n)
        if n == 2:
            check(log.count(DAMAGE_WARNING) == 1, "damage 2: more than one entry dropped")
            check(set(c.hits(ref)) - {damaged} <= set(c.hits(got)),
                  "damage 2: undamaged entries were not served from cache: %s" % c.hits(got))
        c.compare(seq, got, ref, miss, fresh)


def post_ok(srv, path, body):
    resp = srv.post(path, body)
    check("error" not in resp, "%s: %s" % (path, resp))
    return resp


BOMB_MIB = 64  # zeros: a .stz of a few KiB that rebuilds more than a slot of the tiny model can take


def check_bomb_refused(c, srv, slots):
    """A valid .stz slot file that rebuilds far more than a sequence state of this context can
    take is refused before anything is allocated for it; the server goes on serving."""
    zeros, bomb = os.path.join(c.work, "zeros.bin"), os.path.join(slots, "bomb.stz")
    with open(zeros, "wb") as f:
        f.truncate(BOMB_MIB << 20)
    subprocess.run([c.o.statezip, "-f", "-q", "--fast", "-o", bomb, zeros], check=True, timeout=300)
    os.remove(zeros)
    try:
        r = srv.post("/slots/0?action=restore", {"filename": "bomb.stz"})
        raise Failure("the restore of bomb.stz (%d bytes rebuilding %d MiB) succeeded: %s"
                      % (os.path.getsize(bomb), BOMB_MIB, r))
    except ServerError as e:
        check("claims to rebuild" in str(e), "bomb.stz refused for another reason: %s" % e)
        print("bomb.stz (%d bytes, %d MiB of zeros) refused: %s"
              % (os.path.getsize(bomb), BOMB_MIB, str(e)[str(e).find("statezip"):][:160]))
    check(not os.path.exists(bomb + ".plain-tmp"), "a temporary plain file was left behind")
    check(srv.alive() and srv.get("/health").get("status") == "ok", "the server stopped serving")


def case_slots(c):
    """A slot saved as .stz and restored into a fresh server continues exactly as the plain file
    does; `statezip -d` of the .stz is the plain file byte for byte; a .stz rebuilding more than
    a slot can take is refused."""
    slots = os.path.join(c.work, "slots")
    os.makedirs(slots, exist_ok=True)
    extra = codec_extra(c.o) + ["--slot-save-path", slots]
    with c.server("save", BIG_CACHE_MIB, extra) as srv:
        seq = c.prompts(srv)
        first = srv.complete(seq[0], n_predict=N_PREDICT)
        saved_plain = post_ok(srv, "/slots/0?action=save", {"filename": "slot.bin"})
        saved_stz = post_ok(srv, "/slots/0?action=save", {"filename": "slot.stz"})
        follow = seq[0] + first["content"]
        original = srv.complete(follow, n_predict=N_PREDICT, id_slot=0)
        pc = srv.prompt_cache()
    expect_prompt_cache(pc, c.o.codec, "save")
    print("saved: %s / %s" % (saved_plain, saved_stz))
    plain, stz = os.path.join(slots, "slot.bin"), os.path.join(slots, "slot.stz")
    with open(stz, "rb") as f:
        check(f.read(8) == b"\x89STZ\r\n\x1a\n", "slot.stz is not a statezip file")
    check(os.path.getsize(stz) < os.path.getsize(plain), "slot.stz is not smaller than slot.bin")
    restored = os.path.join(c.work, "slot.restored.bin")
    subprocess.run([c.o.statezip, "-d", "-f", "-q", "-o", restored, stz], check=True, timeout=120)
    with open(plain, "rb") as a, open(restored, "rb") as b:
        check(a.read() == b.read(), "statezip -d slot.stz differs from slot.bin")
    # The same bytes as the CLI writes for the plain file with the cache codec's preset.
    preset = {"none": [], "fast": ["--fast"], "default": [], "max": ["--max"]}[pc["codec"]]
    cli = os.path.join(c.work, "slot.cli.stz")
    subprocess.run([c.o.statezip, "-f", "-q"] + preset + ["-o", cli, plain], check=True, timeout=120)
    with open(cli, "rb") as a, open(stz, "rb") as b:
        check(a.read() == b.read(), "slot.stz differs from `statezip %s slot.bin`" % " ".join(preset))
    # Continue the saved conversation in fresh servers: from the .stz and from the plain file.
    results = {}
    for name in ("slot.stz", "slot.bin"):
        with c.server("restore-" + name, BIG_CACHE_MIB, extra) as srv:
            r = post_ok(srv, "/slots/0?action=restore", {"filename": name})
            results[name] = (r, srv.complete(follow, n_predict=N_PREDICT, id_slot=0))
            if name == "slot.stz":
                check_bomb_refused(c, srv, slots)
    (r_stz, a_stz), (r_bin, a_bin) = results["slot.stz"], results["slot.bin"]
    print("restored: %s / %s; cache_n %d / %d" % (r_stz, r_bin, cache_n(a_stz), cache_n(a_bin)))
    check(r_stz.get("n_restored") == r_bin.get("n_restored") == saved_plain.get("n_saved"),
          "restored token counts differ: %s %s %s" % (r_stz, r_bin, saved_plain))
    check(cache_n(a_bin) > len(seq[0].split()) // 2, "the plain restore was not used (cache_n %d)"
          % cache_n(a_bin))
    check(cache_n(a_stz) == cache_n(a_bin), "cache_n %d vs %d" % (cache_n(a_stz), cache_n(a_bin)))
    check(cache_n(a_bin) == cache_n(original), "cache_n %d after the restore, %d in the saving "
          "server" % (cache_n(a_bin), cache_n(original)))
    d = first_difference(answer(original), answer(a_bin))
    check(d is None, "continuation after the plain restore differs from the saving server's: %s" % d)
    d = first_difference(answer(a_bin), answer(a_stz))
    check(d is None, "continuation after the .stz restore differs: %s" % d)
    print("continuations identical: saving server, plain restore, .stz restore")


CASES = {"cache-all": case_cache_all, "cache-small": case_cache_small, "slots": case_slots,
         "damage": case_damage, "lossy": case_lossy}


def main():
    p = argparse.ArgumentParser()
    p.add_argument("case", choices=sorted(CASES))
    p.add_argument("--server", required=True)
    p.add_argument("--model", required=True)
    p.add_argument("--kv", required=True, type=str.lower)
    p.add_argument("--fa", type=int, choices=(0, 1), default=1)
    p.add_argument("--codec", default=None, help="--cache-ram-codec of the patched server "
                   "(default: the server's own default)")
    p.add_argument("--statezip", default="statezip")
    p.add_argument("--work", default=None, help="folder for the servers' logs and slot files, "
                   "emptied first, removed on success (default: a temporary one)")
    p.add_argument("--keep", action="store_true", help="keep the work folder on success too")
    p.add_argument("--time-limit", type=int, default=540)
    opts = p.parse_args()
    if not os.path.exists(opts.model):
        print("SKIP: model %s not found" % opts.model)
        return SKIP
    if not os.access(opts.server, os.X_OK):
        print("FAIL: no llama-server at %s" % opts.server)
        return 1
    if opts.work is None:
        opts.work = tempfile.mkdtemp(prefix="stz-server-")
    else:
        shutil.rmtree(opts.work, ignore_errors=True)
        os.makedirs(opts.work)

    def on_signal(signum, frame):
        raise Failure("stopped by signal %d (time limit %d s)" % (signum, opts.time_limit))
    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGALRM, on_signal)
    signal.alarm(opts.time_limit)
    ok = False
    try:
        CASES[opts.case](Case(opts))
        ok = True
        print("PASS %s" % opts.case)
    except (Failure, ServerError) as e:
        print("FAIL %s: %s" % (opts.case, e))
        print("logs in %s" % opts.work)
    finally:
        signal.alarm(0)
        if ok and not opts.keep:  # a failure keeps the servers' logs
            shutil.rmtree(opts.work, ignore_errors=True)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
