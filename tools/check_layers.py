#!/usr/bin/env python3
"""Checks that no file of src/lib includes a file of a higher layer (docs/layers.txt).

    tools/check_layers.py [SOURCE_TREE]     exit 0: every include goes down or sideways
    tools/check_layers.py --self-test       the check fails on a tree with an upward include

A file's layer is its folder under src/lib (src/lib/<layer>/...), or, for a file still lying flat
in src/lib, the layer docs/layers.txt lists it under. A file in no layer, a folder that is no
layer, and an include that names no file of src/lib are errors too, so the table cannot fall
behind the tree. Standard library only.
"""
import os
import re
import sys
import tempfile

INCLUDE = re.compile(r'^\s*#\s*include\s*"([^"]+)"')
SOURCE_SUFFIXES = (".cpp", ".hpp", ".h", ".def")


def read_layers(path):
    """[(layer, [flat file names])] in order, lowest first."""
    layers = []
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            line = line.split("#", 1)[0].strip()
            if not line:
                continue
            name, sep, files = line.partition(":")
            if not sep or not re.fullmatch(r"[a-z_]+", name.strip()):
                raise SystemExit(f"{path}:{n}: expected 'layer: file file ...'")
            layers.append((name.strip(), files.split()))
    return layers


def layer_of(rel, rank, flat):
    """The layer of a path relative to src/lib, or None."""
    parts = rel.split("/")
    if len(parts) > 1:
        return parts[0] if parts[0] in rank else None
    return flat.get(parts[0])


def check(tree):
    lib = os.path.join(tree, "src", "lib")
    layers = read_layers(os.path.join(tree, "docs", "layers.txt"))
    rank = {name: i for i, (name, _) in enumerate(layers)}
    flat = {}
    for name, files in layers:
        for f in files:
            flat[f] = name
    errors = []
    files = []
    for d, _, names in os.walk(lib):
        for n in names:
            if n.endswith(SOURCE_SUFFIXES):
                files.append(os.path.relpath(os.path.join(d, n), lib).replace(os.sep, "/"))
    includes = 0
    for rel in sorted(files):
        layer = layer_of(rel, rank, flat)
        if layer is None:
            errors.append(f"src/lib/{rel}: in no layer of docs/layers.txt (add it to a layer's line or folder)")
            continue
        with open(os.path.join(lib, rel), encoding="utf-8", errors="replace") as f:
            for n, line in enumerate(f, 1):
                m = INCLUDE.match(line)
                if not m:
                    continue
                includes += 1
                target = resolve(lib, rel, m.group(1))
                where = f"src/lib/{rel}:{n}: #include \"{m.group(1)}\""
                if target is None:
                    errors.append(f"{where} names no file of src/lib")
                    continue
                tlayer = layer_of(target, rank, flat)
                if tlayer is None:
                    continue  # reported as a file in no layer
                if rank[tlayer] > rank[layer]:
                    errors.append(f"{where}: layer '{layer}' includes the higher layer '{tlayer}'")
    for e in errors:
        print(e)
    print(f"check_layers: {len(files)} files, {includes} includes, {len(layers)} layers: "
          + ("OK" if not errors else f"{len(errors)} errors"))
    return not errors


def resolve(lib, rel, name):
    """The included file relative to src/lib: beside the includer first, then from src/lib (the
    library's include folder), as the compiler looks for it; None outside src/lib or missing."""
    for base in (os.path.dirname(os.path.join(lib, rel)), lib):
        p = os.path.normpath(os.path.join(base, name))
        if os.path.isfile(p):
            r = os.path.relpath(p, lib).replace(os.sep, "/")
            return None if r.startswith("../") else r
    return None


def self_test():
    """A tree with one downward and one upward include must fail, and pass without the upward one."""
    with tempfile.TemporaryDirectory() as t:
        os.makedirs(os.path.join(t, "docs"))
        os.makedirs(os.path.join(t, "src", "lib", "high"))
        with open(os.path.join(t, "docs", "layers.txt"), "w") as f:
            f.write("low: low.hpp\nhigh:\n")
        with open(os.path.join(t, "src", "lib", "high", "high.hpp"), "w") as f:
            f.write('#include "low.hpp"\n')
        low = os.path.join(t, "src", "lib", "low.hpp")
        with open(low, "w") as f:
            f.write('#include "high/high.hpp"\n')
        upward_fails = not check(t)
        with open(low, "w") as f:
            f.write("// no includes\n")
        clean_passes = check(t)
    ok = upward_fails and clean_passes
    print("check_layers self-test:", "OK" if ok else "FAILED")
    return ok


if __name__ == "__main__":
    if sys.argv[1:] == ["--self-test"]:
        sys.exit(0 if self_test() else 1)
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
    sys.exit(0 if check(root) else 1)
