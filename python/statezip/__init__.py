"""statezip: lossless compression of llama.cpp state files, from Python.

A ctypes binding of libstatezip's C API (statezip.h). The shared library is found through the
environment variable STATEZIP_LIBRARY (a path), else as "libstatezip.so.<major>" on the
system's library path (ldconfig, LD_LIBRARY_PATH), else through ctypes.util.find_library.

    import statezip
    blob = llm.save_state()                  # bytes
    z = statezip.compress(blob, preset="max")
    assert statezip.decompress(z) == blob
    statezip.inspect(blob)["sections"][0]    # the fields of `statezip inspect --json`

    turn2 = llm.save_state()                 # a later save of the same conversation
    z2 = statezip.compress(turn2, ref=blob)  # stores only what blob lacks (the CLI's --patch-from)
    assert statezip.decompress(z2, ref=blob) == turn2
"""
import ctypes
import ctypes.util
import json
import mmap
import os

__all__ = ["compress", "decompress", "inspect", "version", "Error"]

_SONAME_MAJOR = 0  # the SONAME this module was written for (STATEZIP_SOVERSION in CMakeLists.txt)
_PRESETS = {"fast": 1, "default": 2, "max": 3}


class Error(Exception):
    """A statezip call failed. `code` is the C API's negative STZ_ERROR_* code, `detail` says
    what and where (offset)."""

    def __init__(self, code, message, detail):
        super().__init__(f"{message}: {detail}" if detail else message)
        self.code = code
        self.detail = detail


class _Params(ctypes.Structure):
    _fields_ = [("struct_size", ctypes.c_size_t), ("preset", ctypes.c_int), ("threads", ctypes.c_int),
                ("codec", ctypes.c_char_p)]


def _load():
    candidates = []
    if os.environ.get("STATEZIP_LIBRARY"):
        candidates.append(os.environ["STATEZIP_LIBRARY"])
    candidates.append(f"libstatezip.so.{_SONAME_MAJOR}")
    found = ctypes.util.find_library("statezip")
    if found:
        candidates.append(found)
    errors = []
    for c in candidates:
        try:
            return ctypes.CDLL(c)
        except OSError as e:
            errors.append(str(e))
    raise ImportError("cannot load libstatezip (set STATEZIP_LIBRARY to its path): " + "; ".join(errors))


_lib = _load()
_size_p = ctypes.POINTER(ctypes.c_size_t)
_lib.stz_version_string.restype = ctypes.c_char_p
_lib.stz_params_init.argtypes = [ctypes.POINTER(_Params)]
_lib.stz_compress_bound.argtypes = [ctypes.c_size_t]
_lib.stz_compress_bound.restype = ctypes.c_size_t
_lib.stz_compress.argtypes = [ctypes.c_char_p, ctypes.c_size_t, ctypes.c_void_p, ctypes.c_size_t, _size_p,
                              ctypes.POINTER(_Params)]
_lib.stz_decompressed_size.argtypes = [ctypes.c_char_p, ctypes.c_size_t, ctypes.POINTER(ctypes.c_uint64)]
_lib.stz_decompress.argtypes = [ctypes.c_char_p, ctypes.c_size_t, ctypes.c_void_p, ctypes.c_size_t, _size_p]
_lib.stz_compress_ref.argtypes = [ctypes.c_char_p, ctypes.c_size_t, ctypes.c_char_p, ctypes.c_size_t, ctypes.c_char_p,
                                  ctypes.c_void_p, ctypes.c_size_t, _size_p, ctypes.POINTER(_Params)]
_lib.stz_decompress_ref.argtypes = [ctypes.c_char_p, ctypes.c_size_t, ctypes.c_char_p, ctypes.c_size_t, ctypes.c_void_p,
                                    ctypes.c_size_t, _size_p]
_lib.stz_inspect_json.argtypes = [ctypes.c_char_p, ctypes.c_size_t, ctypes.POINTER(ctypes.c_void_p)]
_lib.stz_free.argtypes = [ctypes.c_void_p]
_lib.stz_error_message.argtypes = [ctypes.c_int]
_lib.stz_error_message.restype = ctypes.c_char_p
_lib.stz_last_error_detail.restype = ctypes.c_char_p


def _check(rc):
    if rc != 0:
        # The detail is thread-local in the library and ctypes calls it on this same thread.
        raise Error(rc, _lib.stz_error_message(rc).decode(), _lib.stz_last_error_detail().decode(errors="replace"))


def version():
    """The library's version string, e.g. "0.2.0"."""
    return _lib.stz_version_string().decode()


# The version of the library this module runs on (the module has no version of its own: it
# ships with the library and is the same release).
__version__ = version()


def compress(data, preset="default", threads=0, codec=None, ref=None, ref_name=None):
    """Compresses a state (bytes-like) into .stz bytes: the same bytes as the statezip
    program with that preset. threads: 0 = all cores (the output does not depend on it).
    ref: the bytes of a related state (an earlier save of the same conversation, ...): the
    .stz then stores only what ref lacks and needs the same ref to decompress (the CLI's
    --patch-from); ref_name is recorded for error messages."""
    if preset not in _PRESETS:
        raise ValueError(f"unknown preset {preset!r} (fast, default, max)")
    data = bytes(data)
    p = _Params()
    _lib.stz_params_init(ctypes.byref(p))
    p.preset = _PRESETS[preset]
    p.threads = threads
    p.codec = codec.encode() if codec else None
    cap = _lib.stz_compress_bound(len(data))
    out = ctypes.create_string_buffer(max(cap, 1))
    n = ctypes.c_size_t(0)
    if ref is None:
        _check(_lib.stz_compress(data, len(data), out, cap, ctypes.byref(n), ctypes.byref(p)))
    else:
        ref = bytes(ref)
        name = ref_name.encode() if ref_name else None
        _check(_lib.stz_compress_ref(data, len(data), ref, len(ref), name, out, cap, ctypes.byref(n), ctypes.byref(p)))
    return out.raw[:n.value]


_STZ_MAGIC = b"\x89STZ\r\n\x1a\n"  # kStzMagic (docs/FORMAT.md)
_ERROR_CORRUPT, _ERROR_MEMORY, _ERROR_REFERENCE = -3, -7, -9


def _error(code, detail):
    return Error(code, _lib.stz_error_message(code).decode(), detail)


def _needed_reference(data):
    """The "patch" fields of inspect for a .stz made with a reference (its name, size and
    XXH3-128), else None. Reads the header and the index only."""
    if not data.startswith(_STZ_MAGIC):
        return None
    return inspect(data).get("patch")


def decompress(data, ref=None):
    """Decompresses .stz bytes and verifies every checksum. ref: the reference a .stz made
    with one needs (Error with code -9 if it is missing or another one). Every bad input
    raises Error: the reference is checked and the size the file claims must be one its
    reference and stored bytes can rebuild before anything is allocated, and the output
    buffer takes memory only as the decoder writes it."""
    data = bytes(data)
    ref = None if ref is None else bytes(ref)
    size = ctypes.c_uint64(0)
    _check(_lib.stz_decompressed_size(data, len(data), ctypes.byref(size)))
    patch = _needed_reference(data)
    if patch is not None:
        want = f'"{patch["reference"]}" ({patch["reference_bytes"]} bytes, xxh128 {patch["reference_xxh128"][:16]}...)'
        if ref is None:
            raise _error(_ERROR_REFERENCE, f"this data was made with a reference and needs {want}: give it with ref=")
        if len(ref) != patch["reference_bytes"]:
            raise _error(_ERROR_REFERENCE, f"the ref given ({len(ref)} bytes) is not the reference this data needs: {want}")
    cap = size.value
    try:
        # Anonymous pages: only the bytes the decoder writes become resident.
        buf = mmap.mmap(-1, max(cap, 1))
    except (OverflowError, OSError, MemoryError, ValueError) as e:
        raise _error(_ERROR_MEMORY, f"cannot reserve {cap} bytes for the output: {e}") from None
    try:
        out = (ctypes.c_char * max(cap, 1)).from_buffer(buf)
        n = ctypes.c_size_t(0)
        try:
            if ref is None:
                _check(_lib.stz_decompress(data, len(data), out, cap, ctypes.byref(n)))
            else:
                _check(_lib.stz_decompress_ref(data, len(data), ref, len(ref), out, cap, ctypes.byref(n)))
        finally:
            del out
        return buf[:n.value]
    finally:
        buf.close()


def inspect(data):
    """The sections of a state (or of the state inside .stz bytes) as a dict with the fields
    of `statezip inspect --json` ("file" is "-")."""
    data = bytes(data)
    p = ctypes.c_void_p()
    _check(_lib.stz_inspect_json(data, len(data), ctypes.byref(p)))
    try:
        return json.loads(ctypes.string_at(p).decode())
    finally:
        _lib.stz_free(p)
