#!/usr/bin/env python3
"""The lossy trade-off table (bench/LOSSY.md, README): per KV cache type and lossy setting, the
compressed size with the default preset and --max, the rounding error statezip reports, and the
error on the real runtime (llama.cpp v0.4.0 via node-llama-cpp: original and restored state
loaded in fresh contexts, 32 steps teacher-forced with the original's greedy tokens).

  python3 bench/lossy.py [--model M.gguf] [--tokens 500] [--statezip build/statezip]
                         [--node-modules build/tests/integration/llama/node_modules]

The node modules come from `ctest -R llama.setup` (build/tests/integration/llama)."""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SETTINGS = {
    "F32": ["f16-exact", "keep:K=10,V=10", "keep:K=10,V=4"],
    "F16": ["drop:V=6", "drop:K=2,V=6", "drop:K=4,V=6"],
    "BF16": ["drop:V=3", "drop:V=4", "drop:K=2,V=4"],
}


def run(cmd, env=None, cwd=None):
    r = subprocess.run(cmd, env=env, cwd=cwd, capture_output=True, text=True)
    if r.returncode:
        sys.exit("failed: %s\n%s%s" % (" ".join(cmd), r.stdout, r.stderr))
    return r


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", default=os.path.join(ROOT, "..", "shared", "models", "stories260K.gguf"))
    ap.add_argument("--tokens", type=int, default=500)
    ap.add_argument("--statezip", default=os.path.join(ROOT, "build", "statezip"))
    ap.add_argument("--node-modules", default=os.path.join(ROOT, "build", "tests", "integration", "llama", "node_modules"))
    a = ap.parse_args()
    stz = os.path.abspath(a.statezip)
    work = tempfile.mkdtemp(prefix="stz-lossy-")
    try:
        os.symlink(os.path.abspath(a.node_modules), os.path.join(work, "node_modules"))
        shutil.copy(os.path.join(ROOT, "tests", "integration", "llama_state.mjs"), work)
        print("| KV | flash attn | setting | default bytes (ratio) | --max bytes (ratio) | vs lossless default |"
              " K max rel err | V max rel err | mean KL | max KL | top-1 | max abs Δlog p |")
        print("|---|---|---|---|---|---|---|---|---|---|---|---|")
        for kv, specs in SETTINGS.items():
            for fa in ("1", "0"):
                env = dict(os.environ, NLS_KV_TYPE=kv, NLS_FLASH_ATTN=fa, NLS_TOKENS=str(a.tokens))
                run(["node", "llama_state.mjs", "save", a.model, "state.bin", "ref.json"], env, work)
                size = os.path.getsize(os.path.join(work, "state.bin"))
                base = None
                for spec in [None] + specs:
                    lossy = ["--lossy=" + spec] if spec else []
                    sizes = []
                    for preset in ([], ["--max"]):
                        r = run([stz, "-f", *preset, *lossy, "-o", "s.stz", "state.bin"], cwd=work)
                        sizes.append(os.path.getsize(os.path.join(work, "s.stz")))
                    base = base or sizes[0]
                    summary = r.stderr.strip().splitlines()[-1] if spec else ""
                    rel = dict(re.findall(r"(K|V): max abs [^,]+, max rel ([^,]+),", summary))
                    if spec and not rel:  # nothing rounded: say why
                        print("| %s | %s | %s | left exact: %s |||||||||" % (kv, fa, spec, summary.split("(", 1)[-1].rstrip(")")))
                        continue
                    kl = "| | | | "
                    if spec:
                        run([stz, "-q", "-t", "s.stz"], cwd=work)
                        run([stz, "-q", "-d", "-f", "-o", "r.bin", "s.stz"], cwd=work)
                        d = json.loads(run(["node", "llama_state.mjs", "lossy", a.model, "state.bin", "r.bin"], env, work).stdout)
                        kl = "| %.2g | %.2g | %.3f | %.3g " % (d["meanKL"], d["maxKL"], d["top1Agreement"], d["maxAbsLogProbDiff"])
                        if d["identical"]:
                            kl = "| 0 (bit-identical) | 0 | 1.000 | 0 "
                    print("| %s | %s | %s | %d (%.2f×) | %d (%.2f×) | %s | %s | %s %s|" % (
                        kv, fa, spec or "lossless", sizes[0], size / sizes[0], sizes[1], size / sizes[1],
                        "%+.1f %%" % (100.0 * sizes[0] / base - 100) if spec else "", rel.get("K", "exact" if spec else ""),
                        rel.get("V", "exact" if spec else ""), kl))
                    sys.stdout.flush()
    finally:
        shutil.rmtree(work)


if __name__ == "__main__":
    main()
