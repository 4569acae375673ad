// The C API (include/statezip.h) over the engine: memory and callback adapters, presets,
// and the translation of every C++ exception into an error code and a thread-local detail.
#include "statezip.h"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <new>
#include <thread>

#include "container/container.hpp"
#include "engine/engine.hpp"
#include "report/inspect.hpp"
#include "related/patch.hpp"
#include "plan/plan.hpp"
#include "engine/presets.hpp"
#include "spool.hpp"

using namespace stz;
using stzcapi::ReadFailed;
using stzcapi::SpoolFailed;

namespace {

thread_local std::string t_detail;

// The caller's destination cannot hold the output (SpanSink's error too).
using DstTooSmall = OutputFull;
struct WriteFailed : Error {
    using Error::Error;
};
struct BadParameter : Error {
    using Error::Error;
};
// A nested C API call failed: its code and detail stand.
struct RecordedError {
    int code;
};

// Inputs up to this size are parsed from memory by stz_compress_stream; larger ones spool to disk.
constexpr size_t kSpoolMemoryLimit = 64u << 20;

// Records the detail of a failure; never throws (an allocation failure leaves it empty).
void set_detail(const char* what) noexcept {
    try {
        t_detail = what;
    } catch (...) {
        t_detail.clear();
    }
}

// Runs `f` with every exception turned into a code; `data_error` is the code of a stz::Error
// that is not more specific (bad input when decoding, a refused option when encoding).
template <class F> int guarded(int data_error, F&& f) noexcept {
    try {
        t_detail.clear();
        f();
        return STZ_OK;
    } catch (const RecordedError& e) {
        return e.code;
    } catch (const DstTooSmall& e) {
        set_detail(e.what());
        return STZ_ERROR_DST_TOO_SMALL;

    } catch (const ReadFailed& e) {
        set_detail(e.what());
        return STZ_ERROR_READ;
    } catch (const WriteFailed& e) {
        set_detail(e.what());
        return STZ_ERROR_WRITE;
    } catch (const SpoolFailed& e) {
        set_detail(e.what());
        return STZ_ERROR_IO;
    } catch (const BadParameter& e) {
        set_detail(e.what());
        return STZ_ERROR_PARAMETER;
    } catch (const ReferenceError& e) {
        set_detail(e.what());
        return STZ_ERROR_REFERENCE;
    } catch (const DataError& e) {
        set_detail(e.what());
        return STZ_ERROR_CORRUPT;
    } catch (const Error& e) {
        set_detail(e.what());
        return data_error;
    } catch (const std::bad_alloc&) {
        set_detail("out of memory");
        return STZ_ERROR_MEMORY;
    } catch (const std::exception& e) {
        set_detail(e.what());
        return STZ_ERROR_GENERIC;
    } catch (...) {
        return STZ_ERROR_GENERIC;
    }
}

unsigned resolve_threads(int requested, uint64_t work_units) {
    if (requested < 0) throw BadParameter("threads must be 0 (all cores) or a count, not " + std::to_string(requested));
    // Read once: glibc reads /sys/devices/system/cpu/online on every call (6 us here, as much
    // as a small plane's coding).
    static const unsigned hc = std::max(1u, std::thread::hardware_concurrency());
    uint64_t t = requested ? uint64_t(requested) : hc;
    t = std::min<uint64_t>({t, 4ull * hc, std::max<uint64_t>(work_units, 1)});
    return static_cast<unsigned>(t);
}

// The options the CLI uses for the same preset and codec (presets.hpp).
CompressOptions options_from(const stz_params* p, uint64_t input_bytes) {
    stz_params d;
    stz_params_init(&d);
    if (p) {
        if (p->struct_size != sizeof(stz_params) && p->struct_size != STZ_PARAMS_SIZE_V1)
            throw BadParameter("stz_params.struct_size is " + std::to_string(p->struct_size) + ", expected " +
                               std::to_string(sizeof(stz_params)) + " or " + std::to_string(STZ_PARAMS_SIZE_V1) +
                               " (call stz_params_init)");
        std::memcpy(&d, p, p->struct_size);  // an older caller's struct ends early: the rest keeps its default
    }
    Preset preset;
    switch (d.preset) {
        case STZ_PRESET_FAST: preset = Preset::Fast; break;
        case STZ_PRESET_DEFAULT: preset = Preset::Default; break;
        case STZ_PRESET_MAX: preset = Preset::Max; break;
        default: throw BadParameter("unknown preset " + std::to_string(d.preset));
    }
    CompressOptions o;
    try {
        o = preset_options(preset, 0, d.codec ? d.codec : "");
    } catch (const Error& e) {
        throw BadParameter(std::string("codec: ") + e.what());
    }
    if (d.lossy) {
        try {
            o.lossy = parse_lossy_spec(d.lossy);
        } catch (const Error& e) {
            throw BadParameter(std::string("lossy: ") + e.what());
        }
    }
    o.threads = resolve_threads(d.threads, input_bytes / o.chunk_bytes + 1);
    return o;
}

class CallbackSink final : public OutputSink {
public:
    CallbackSink(stz_write_fn fn, void* ctx) : fn_(fn), ctx_(ctx) {}
    void write(const uint8_t* data, size_t n) override {
        if (n && fn_(ctx_, data, n) != 0) throw WriteFailed("the write callback failed after " + std::to_string(done_) + " bytes");
        done_ += n;
    }

private:
    stz_write_fn fn_;
    void* ctx_;
    uint64_t done_ = 0;
};

// Reads from the callback; counts bytes so that an error names where it happened.
class CallbackReader {
public:
    CallbackReader(stz_read_fn fn, void* ctx) : fn_(fn), ctx_(ctx) {}
    size_t read(uint8_t* dst, size_t n) {
        if (n == 0) return 0;
        const long long r = fn_(ctx_, dst, n);
        if (r < 0 || static_cast<unsigned long long>(r) > n)
            throw ReadFailed("the read callback failed (returned " + std::to_string(r) + ") at offset " + std::to_string(done_));
        done_ += uint64_t(r);
        return size_t(r);
    }

private:
    stz_read_fn fn_;
    void* ctx_;
    uint64_t done_ = 0;
};

class CallbackStream final : public InputStream {
public:
    CallbackStream(stz_read_fn fn, void* ctx) : r_(fn, ctx) {}
    size_t read(uint8_t* dst, size_t n) override { return r_.read(dst, n); }

private:
    CallbackReader r_;
};

void require(bool ok, const char* what) {
    if (!ok) throw BadParameter(what);
}

// stz_decompress and stz_decompress_ref: a .stz into a caller's buffer (ref: the reference
// file a --patch-from .stz needs, or null).
void decompress_into(const void* src, size_t src_size, InputSource* ref, void* dst, size_t dst_capacity, size_t* dst_size,
                     int threads) {
    require(src || !src_size, "src is NULL");
    require(dst || !dst_capacity, "dst is NULL");
    require(dst_size, "dst_size is NULL");
    *dst_size = 0;
    MemoryStream in(ByteSpan(static_cast<const uint8_t*>(src), src_size));
    SpanSink out(static_cast<uint8_t*>(dst), dst_capacity);
    DecompressOptions d;
    d.threads = resolve_threads(threads, src_size / 44 + 1);  // a chunk record takes at least 44 bytes
    d.reference = ref;
    try {
        decompress_stream(in, out, d);
    } catch (const DstTooSmall&) {
        // The sink refuses any byte past dst_capacity, so the header is read once, by the
        // decompression (reading it first as well, with the first chunk's check, was 3 % of a
        // small file's decompression); only a file that did not fit is read again, to name the
        // size it needs (or as damaged, if its header fails that check). (A --patch-from file
        // written before patched_size was recorded does not state its size: the sink's error.)
        uint64_t size = 0;
        if (const int rc = stz_decompressed_size(src, src_size, &size); rc != STZ_OK) throw RecordedError{rc};
        if (size <= dst_capacity) throw;
        throw DstTooSmall("destination buffer too small: " + std::to_string(dst_capacity) + " bytes for " +
                          std::to_string(size));
    }
    *dst_size = out.used();
}

}  // namespace

extern "C" {

const char* stz_version_string(void) { return STATEZIP_VERSION_STRING; }

void stz_params_init_size(stz_params* p, size_t struct_size) {
    if (!p) return;
    const bool known = struct_size == sizeof *p || struct_size == STZ_PARAMS_SIZE_V1;
    stz_params d{};
    d.struct_size = known ? struct_size : 0;
    d.preset = STZ_PRESET_DEFAULT;
    std::memcpy(p, &d, known ? struct_size : sizeof d.struct_size);  // never past the caller's struct
}

void(stz_params_init)(stz_params* p) { stz_params_init_size(p, STZ_PARAMS_SIZE_V1); }

size_t stz_compress_bound(size_t src_size) {
    // The engine keeps an input it can try in memory (a quarter of its budget) within
    // expansion_allowance; a larger one within the overhead its plan may cost, which is at
    // most structure_allowance (plan.hpp, engine.cpp compress_parsed).
    const uint64_t extra = src_size <= kDefaultMemoryBudget / 4 ? expansion_allowance(src_size)
                                                                : std::max(expansion_allowance(src_size), structure_allowance(src_size));
    const uint64_t b = uint64_t(src_size) + extra;
    return b < src_size || b > SIZE_MAX ? SIZE_MAX : size_t(b);
}

int stz_compress(const void* src, size_t src_size, void* dst, size_t dst_capacity, size_t* dst_size,
                 const stz_params* params) {
    return guarded(STZ_ERROR_GENERIC, [&] {
        require(src || !src_size, "src is NULL");
        require(dst || !dst_capacity, "dst is NULL");
        require(dst_size, "dst_size is NULL");
        *dst_size = 0;
        CompressOptions o = options_from(params, src_size);
        MemorySource in(ByteSpan(static_cast<const uint8_t*>(src), src_size));
        SpanSink out(static_cast<uint8_t*>(dst), dst_capacity);
        compress_stream(in, out, o);
        *dst_size = out.used();
    });
}

int stz_decompressed_size(const void* src, size_t src_size, uint64_t* size) {
    return guarded(STZ_ERROR_CORRUPT, [&] {
        require(src || !src_size, "src is NULL");
        require(size, "size is NULL");
        *size = 0;
        MemoryStream in(ByteSpan(static_cast<const uint8_t*>(src), src_size));
        *size = rebuilt_size(read_checked_header(in));
    });
}

int stz_decompress(const void* src, size_t src_size, void* dst, size_t dst_capacity, size_t* dst_size) {
    return stz_decompress_threads(src, src_size, dst, dst_capacity, dst_size, 0);
}

int stz_decompress_threads(const void* src, size_t src_size, void* dst, size_t dst_capacity, size_t* dst_size,
                           int threads) {
    return guarded(STZ_ERROR_CORRUPT,
                   [&] { decompress_into(src, src_size, nullptr, dst, dst_capacity, dst_size, threads); });
}

int stz_compress_ref(const void* src, size_t src_size, const void* ref, size_t ref_size, const char* ref_name, void* dst,
                     size_t dst_capacity, size_t* dst_size, const stz_params* params) {
    return guarded(STZ_ERROR_GENERIC, [&] {
        require(src || !src_size, "src is NULL");
        require(ref || !ref_size, "ref is NULL");
        require(dst || !dst_capacity, "dst is NULL");
        require(dst_size, "dst_size is NULL");
        *dst_size = 0;
        CompressOptions o = options_from(params, src_size);
        if (o.lossy.active()) throw BadParameter("lossy applies to stz_compress and stz_compress_stream, not to stz_compress_ref");
        MemorySource in(ByteSpan(static_cast<const uint8_t*>(src), src_size));
        MemorySource r(ByteSpan(static_cast<const uint8_t*>(ref), ref_size));
        MemorySink stored;  // the size is known only at the end: usually a small fraction of src
        compress_patch(in, r, ref_name ? ref_name : "", stored, o);
        if (stored.out.size() > dst_capacity)
            throw DstTooSmall("destination buffer too small: " + std::to_string(dst_capacity) + " bytes, " +
                              std::to_string(stored.out.size()) + " needed");
        if (!stored.out.empty()) std::memcpy(dst, stored.out.data(), stored.out.size());
        *dst_size = stored.out.size();
    });
}

int stz_decompress_ref(const void* src, size_t src_size, const void* ref, size_t ref_size, void* dst, size_t dst_capacity,
                       size_t* dst_size) {
    return stz_decompress_ref_threads(src, src_size, ref, ref_size, dst, dst_capacity, dst_size, 0);
}

int stz_decompress_ref_threads(const void* src, size_t src_size, const void* ref, size_t ref_size, void* dst,
                               size_t dst_capacity, size_t* dst_size, int threads) {
    return guarded(STZ_ERROR_CORRUPT, [&] {
        require(ref || !ref_size, "ref is NULL");
        MemorySource r(ByteSpan(static_cast<const uint8_t*>(ref), ref_size));
        decompress_into(src, src_size, &r, dst, dst_capacity, dst_size, threads);
    });
}

int stz_compress_stream(stz_read_fn read, void* rctx, stz_write_fn write, void* wctx, const stz_params* params) {
    return guarded(STZ_ERROR_GENERIC, [&] {
        require(read && write, "read or write callback is NULL");
        options_from(params, 0);  // refuse bad parameters before reading anything
        CallbackReader reader(read, rctx);
        stzcapi::SpooledInput in([&](uint8_t* b, size_t n) { return reader.read(b, n); }, kSpoolMemoryLimit);
        CompressOptions o = options_from(params, in.size());
        CallbackSink out(write, wctx);
        compress_stream(in, out, o);
    });
}

int stz_decompress_stream(stz_read_fn read, void* rctx, stz_write_fn write, void* wctx, int threads) {
    return guarded(STZ_ERROR_CORRUPT, [&] {
        require(read && write, "read or write callback is NULL");
        CallbackStream in(read, rctx);
        CallbackSink out(write, wctx);
        DecompressOptions d;
        d.threads = resolve_threads(threads, UINT64_MAX);
        decompress_stream(in, out, d);
    });
}

int stz_inspect_json(const void* src, size_t src_size, char** json) {
    return guarded(STZ_ERROR_CORRUPT, [&] {
        require(src || !src_size, "src is NULL");
        require(json, "json is NULL");
        *json = nullptr;
        MemorySource in(ByteSpan(static_cast<const uint8_t*>(src), src_size));
        const std::string text = inspect_json("-", inspect_input(in, ParseHints{}));
        char* p = static_cast<char*>(std::malloc(text.size() + 1));
        if (!p) throw std::bad_alloc();
        std::memcpy(p, text.c_str(), text.size() + 1);
        *json = p;
    });
}

void stz_free(void* p) { std::free(p); }

const char* stz_error_message(int code) {
    switch (code) {
        case STZ_OK: return "no error";
        case STZ_ERROR_GENERIC: return "error";
        case STZ_ERROR_DST_TOO_SMALL: return "destination buffer too small";
        case STZ_ERROR_CORRUPT: return "corrupt or truncated input";
        case STZ_ERROR_PARAMETER: return "invalid parameter";
        case STZ_ERROR_READ: return "read callback failed";
        case STZ_ERROR_WRITE: return "write callback failed";
        case STZ_ERROR_MEMORY: return "out of memory";
        case STZ_ERROR_IO: return "temporary file failed";
        case STZ_ERROR_REFERENCE: return "the reference given is missing or not the one this file needs";
        default: return "unknown error code";
    }
}

const char* stz_last_error_detail(void) { return t_detail.c_str(); }

}  // extern "C"
