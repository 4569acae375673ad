"""The Python module over the shared library of the build: round trips for every preset, the
same bytes as the CLI, inspect = inspect --json, errors as statezip.Error with the detail."""
import json
import os
import subprocess
import sys
import tempfile

import statezip

BIN = os.environ["STATEZIP_BIN"]
DATA = os.environ["STATEZIP_TEST_DATA"]
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAILED:", what, file=sys.stderr)


sample = os.path.join(DATA, "ggsq3.stories260K.f16.fa1.c1024.t322.bin")
with open(sample, "rb") as f:
    state = f.read()

check(statezip.version().count(".") == 2, "version string")
with tempfile.TemporaryDirectory() as tmp:
    for preset, flag in (("fast", ["--fast"]), ("default", []), ("max", ["--max"])):
        z = statezip.compress(state, preset=preset)
        check(statezip.decompress(z) == state, f"round trip {preset}")
        out = os.path.join(tmp, "cli.stz")
        subprocess.run([BIN, "-q", "-f", *flag, sample, "-o", out], check=True)
        with open(out, "rb") as f:
            check(f.read() == z, f"same bytes as the CLI ({preset})")
    check(statezip.decompress(statezip.compress(b"")) == b"", "empty input")
    check(statezip.decompress(statezip.compress(bytearray(b"abc" * 1000), codec="zstd:3")) == b"abc" * 1000, "codec")

    # inspect: the document inspect --json prints, for the state and for its .stz.
    z = statezip.compress(state)
    stz_path = os.path.join(tmp, "f.stz")
    with open(stz_path, "wb") as f:
        f.write(z)
    for path, data in ((sample, state), (stz_path, z)):
        cli = json.loads(subprocess.run([BIN, "inspect", "--json", path], check=True, capture_output=True).stdout)
        cli["file"] = "-"
        got = statezip.inspect(data)
        check(got == cli, f"inspect({os.path.basename(path)}) == inspect --json")
    check(statezip.inspect(state)["sections"][0]["name"] != "", "inspect has sections")

# A related state given a reference: smaller, and refused without it (code -9, names it).
turn2 = bytearray(state)
for i in range(len(turn2) - 3000, len(turn2), 5):
    turn2[i] ^= 0x11
zr = statezip.compress(turn2, ref=state, ref_name="turn1.bin")
check(len(zr) * 3 < len(statezip.compress(turn2)), f"with a reference: {len(zr)} bytes")
check(statezip.decompress(zr, ref=state) == bytes(turn2), "round trip with a reference")
try:
    statezip.decompress(zr)
    check(False, "decoded without its reference")
except statezip.Error as e:
    check(e.code == -9 and "turn1.bin" in e.detail, f"missing reference: {e}")

# Errors: statezip.Error with the code and the detail (offset).
for bad, code in ((z[: len(z) // 2], -3), (b"not a stz file at all", -3), (z[:-1], -3)):
    try:
        statezip.decompress(bad)
        check(False, "bad input accepted")
    except statezip.Error as e:
        check(e.code == code, f"error code {e.code} (expected {code})")
        check("offset" in e.detail or "magic" in e.detail or "stz" in e.detail, f"detail names where: {e.detail!r}")
# Crafted --patch-from files (stz-hostile, beside the CLI): every one raises statezip.Error,
# before any large allocation. Run in a child under a 2 GiB address-space limit and a time
# limit, so that a regression (MemoryError, or gigabytes allocated) fails here without
# taking the machine's memory.
HOSTILE = os.path.join(os.path.dirname(BIN), "stz-hostile")
check(os.access(HOSTILE, os.X_OK), f"{HOSTILE} is built (cmake --build --target stz-hostile)")
CHILD = r"""
import sys, statezip
ref = open(sys.argv[1], "rb").read()
results = []
for path, with_ref in zip(sys.argv[2::2], sys.argv[3::2]):
    data = open(path, "rb").read()
    try:
        statezip.decompress(data, ref=ref if with_ref == "1" else None)
        results.append("decoded")
    except statezip.Error as e:
        results.append(str(e.code))
    except BaseException as e:
        results.append(type(e).__name__)
print(" ".join(results))
"""
if os.access(HOSTILE, os.X_OK):
    import resource
    with tempfile.TemporaryDirectory() as tmp:
        def hostile(case, size=None):
            out = os.path.join(tmp, case + (f"-{size}" if size else "") + ".stz")
            subprocess.run([HOSTILE, case, out] + (["--size", str(size)] if size else []), check=True)
            return out
        ref = hostile("patch-ref")
        cases = [  # (file, given its ref, expected code)
            (hostile("patch-size-claim", 1 << 50), "0", "-3"),   # 0.x: MemoryError
            (hostile("patch-size-claim", 4000000000), "1", "-3"),  # 0.x: 4 GB allocated
            (hostile("patch-size-claim", 3584), "0", "-9"),  # a real claim, no ref: named, nothing allocated
            (hostile("patch-byte-copies", 2 << 20), "1", "-3"),
            (hostile("patch-repeated-copies", 32 << 20), "1", "-3"),
        ]
        args = [ref] + [x for c in cases for x in c[:2]]

        def limit():
            resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))
        try:
            r = subprocess.run([sys.executable, "-c", CHILD] + args, capture_output=True, text=True, timeout=120,
                               preexec_fn=limit)
            got = r.stdout.split()
            check(got == [c[2] for c in cases], f"hostile patches: {got} (expected {[c[2] for c in cases]}) {r.stderr[-300:]}")
        except subprocess.TimeoutExpired:
            check(False, "hostile patches: no answer within 120 s")
        # The real patch decodes given its ref; a ref of another size is refused as such.
        with open(ref, "rb") as f:
            refb = f.read()
        with open(hostile("patch-size-claim", 3584), "rb") as f:
            good = f.read()
        check(len(statezip.decompress(good, ref=refb)) == 3584, "small real patch decodes")
        try:
            statezip.decompress(good, ref=refb[:-1])
            check(False, "a ref of another size accepted")
        except statezip.Error as e:
            check(e.code == -9 and "ref.bin" in e.detail, f"ref of another size: {e}")
        # inspect says it is a patch, names its reference and gives the rebuilt size.
        info = statezip.inspect(good)
        check(info["bytes"] == 3584 and info["patch"]["reference"] == "ref.bin" and
              info["patch"]["reference_bytes"] == len(refb), f"inspect of a patch: {info.get('patch')}")

try:
    statezip.compress(state, codec="nosuchcodec")
    check(False, "bad codec accepted")
except statezip.Error as e:
    check(e.code == -4 and "nosuchcodec" in str(e), f"bad codec: {e}")
try:
    statezip.compress(state, preset="turbo")
    check(False, "bad preset accepted")
except ValueError:
    pass

print("python module:", "FAILED" if failures else "OK", f"({statezip.version()})")
sys.exit(1 if failures else 0)
