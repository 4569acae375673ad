// Decoding a --patch-from file (patch_decode.hpp): the head, the map's checks before anything is
// written, and PatchSink, which rebuilds the original from the stored stream and REF.
#include "patch_decode.hpp"

#define ZSTD_STATIC_LINKING_ONLY  // ZSTD_decompressBound
#include <zstd.h>

#include <cstring>
#include <memory>

#include "codecs/varint.hpp"
#include "base/hashing.hpp"
#include "patch_io.hpp"
#include "patch_map.hpp"
#include "token_model.hpp"
#include "base/zstd_context.hpp"

namespace stz {

namespace {

// Reads a head (above): the map, and the meta bytes into `meta`.
PatchMap decode_head(ByteSpan head, InputSource& ref, Bytes& meta, uint64_t max_original, PatchSources& sources) {
    size_t pos = 0;
    auto v = [&](const char* what) {
        try {
            return get_varint(head, pos, "patch head");
        } catch (const Error&) {
            throw DataError(std::string("patch head: bad ") + what, pos);
        }
    };
    std::vector<PatchExtent> dict_extents;
    uint64_t n = v("dictionary count"), dict_bytes = 0;
    if (n > head.size()) throw DataError("patch head: bad dictionary count", 0);
    for (uint64_t i = 0; i < n; ++i) {
        PatchExtent e{v("dictionary offset"), v("dictionary length")};
        if (e.length > kMaxPatchMetaBytes - dict_bytes) throw DataError("patch head: dictionary too large", pos);
        dict_bytes += e.length;
        dict_extents.push_back(e);
    }
    const ByteSpan frame = head.subspan(pos);
    const unsigned long long size = ZSTD_getFrameContentSize(frame.data(), frame.size());
    // The claimed size must be one the frame's blocks can hold before it is allocated.
    const unsigned long long bound = ZSTD_decompressBound(frame.data(), frame.size());
    if (size == ZSTD_CONTENTSIZE_UNKNOWN || size == ZSTD_CONTENTSIZE_ERROR || size > kMaxPatchMapBytes + kMaxPatchMetaBytes ||
        bound == ZSTD_CONTENTSIZE_ERROR || size > bound || ZSTD_findFrameCompressedSize(frame.data(), frame.size()) != frame.size())
        throw DataError("corrupt patch frame", pos);
    const Bytes dict = read_dictionary(ref, dict_extents);
    Bytes content(size);
    ZstdDCtx ctx;
    ZSTD_DCtx* d = ctx.d;
    ZSTD_DCtx_setParameter(d, ZSTD_d_windowLogMax, 27);
    if (!dict.empty()) ZSTD_DCtx_refPrefix(d, dict.data(), dict.size());
    size_t got = ZSTD_decompressDCtx(d, content.data(), content.size(), frame.data(), frame.size());
    if (ZSTD_isError(got) || got != content.size()) throw DataError("corrupt patch frame", pos);
    return decode_patch_content(content, ref, meta, pos, max_original, &sources);
}

}  // namespace

PatchMap decode_patch_content(ByteSpan content, InputSource& ref, Bytes& meta, uint64_t base, uint64_t max_original,
                              PatchSources* sources) {
    size_t map_len = 0;
    PatchMap m = decode_patch_map(content, 0, &map_len, max_original);
    if (map_len > kMaxPatchMapBytes || content.size() - map_len != m.meta_raw)
        throw DataError("patch frame: map and meta sizes disagree", base);
    const PatchSources src = check_patch_sources(m, ref.size());
    meta.assign(content.begin() + static_cast<ptrdiff_t>(map_len), content.end());
    if (m.tokens) restore_meta_tokens(m, ref, meta);
    if (src.from_meta != meta.size())
        throw DataError("patch map takes " + std::to_string(src.from_meta) + " meta bytes, its frame holds " +
                            std::to_string(meta.size()),
                        base);
    if (sources) *sources = src;
    return m;
}

struct PatchSink::State {
    static constexpr size_t kPendingBytes = 1u << 20, kSmallPiece = 4096;
    OutputSink& out;
    CachedSource ref;
    uint64_t head_size = 0;  // section 0: the map, then the meta frame
    Bytes head;
    PatchMap map;
    Bytes meta;  // what the meta frame holds
    uint64_t meta_used = 0;
    std::optional<PatchWalker> walker;
    std::optional<PatchSegment> seg;  // the current stream segment (with what is left of it)
    Hasher128 hash;
    Bytes buf;
    // Small pieces (transposed rows, 2 bytes a piece) are written and hashed together.
    std::unique_ptr<uint8_t[]> pending = std::make_unique_for_overwrite<uint8_t[]>(kPendingBytes);
    size_t pending_used = 0;
    uint64_t stream_pos = 0;
    uint64_t stream_size = 0;      // the stored stream (head included), as the header says
    std::optional<uint64_t> claimed;  // patched_size
    State(OutputSink& o, InputSource& r) : out(o), ref(r) {}
    void flush() {
        if (!pending_used) return;
        out.write(pending.get(), pending_used);
        hash.update(pending.get(), pending_used);
        pending_used = 0;
    }
    // Room for k < kSmallPiece bytes at the end of the pending ones (filled by the caller).
    uint8_t* reserve(size_t k) {
        if (pending_used + k > kPendingBytes) flush();
        pending_used += k;
        return pending.get() + pending_used - k;
    }
    void emit(const uint8_t* d, size_t k) {
        if (k >= kSmallPiece) {  // written as it is: copying it would cost more than the call
            flush();
            out.write(d, k);
            hash.update(d, k);
            return;
        }
        std::memcpy(reserve(k), d, k);
    }
};

namespace {

ReferenceIdentity required_identity(const ContainerHeader& h) {
    const HeaderProperty* p = h.property(kReferenceProperty);
    if (!p) throw Error("not a --patch-from file");
    auto id = parse_reference_identity(p->value);
    if (!id) throw DataError("unreadable reference property '" + p->value + "'", 16);
    return *id;
}

}  // namespace

PatchSink::PatchSink(const ContainerHeader& h, InputSource* ref, OutputSink& out) {
    ReferenceIdentity want = required_identity(h);
    if (!ref) throw ReferenceError("this file was made with --patch-from and needs the reference file " + want.describe() +
                                   ": give it with --patch-from");
    if (ref->size() != want.size || identify_reference(*ref, want.name).xxh128 != want.xxh128)
        throw ReferenceError("the --patch-from file given is not the reference this file needs: " + want.describe());
    if (h.sections.empty() || h.sections[0].name != kPatchMapSection || h.sections[0].size == 0 ||
        h.sections[0].size > kMaxPatchMapBytes + kMaxPatchMetaBytes || h.sections[0].size > h.original_size)
        throw DataError("a reference file without a patch map", 16);
    s_ = std::make_shared<State>(out, *ref);
    s_->head_size = h.sections[0].size;
    s_->stream_size = h.original_size;
    if (h.property(kPatchedSizeProperty)) s_->claimed = rebuilt_size(h);
}

void PatchSink::write(const uint8_t* data, size_t n) {
    State& s = *s_;
    auto emit = [&](const uint8_t* d, size_t k) {
        s.emit(d, k);
        out_pos_ += k;
    };
    // Emits REF and meta segments until the next segment of new K/V rows (or the end).
    auto advance = [&] {
        while ((s.seg = s.walker->next()) && (s.seg->from_ref || !s.seg->part)) {
            const PatchSegment& g = *s.seg;
            if (!g.from_ref) {
                if (g.length > s.meta.size() - s.meta_used) throw DataError("patch map reads past its meta bytes", 16);
                emit(s.meta.data() + s.meta_used, g.length);
                s.meta_used += g.length;
                continue;
            }
            if (g.ref_offset > s.ref.size() || g.length > s.ref.size() - g.ref_offset)
                throw DataError("patch map copies past the end of the reference file", 16);
            if (g.length < State::kSmallPiece) {  // a piece of a transposed row: read straight into the pending bytes
                s.ref.read_at(g.ref_offset, s.reserve(g.length), g.length);
                out_pos_ += g.length;
                continue;
            }
            s.buf.resize(std::min<uint64_t>(g.length, 1u << 20));
            for (uint64_t done = 0; done < g.length;) {
                size_t k = static_cast<size_t>(std::min<uint64_t>(s.buf.size(), g.length - done));
                s.ref.read_at(g.ref_offset + done, s.buf.data(), k);
                emit(s.buf.data(), k);
                done += k;
            }
        }
    };
    while (n) {
        if (!s.walker) {
            size_t k = static_cast<size_t>(std::min<uint64_t>(n, s.head_size - s.head.size()));
            s.head.insert(s.head.end(), data, data + k);
            data += k, n -= k, s.stream_pos += k;
            if (s.head.size() < s.head_size) continue;
            PatchSources sources;
            s.map = decode_head(s.head, s.ref, s.meta, max_patch_original(s.ref.size(), s.stream_size), sources);
            s.head = Bytes();
            // What can be checked before anything is copied: the sizes the map claims.
            if (s.claimed && *s.claimed != s.map.original_size)
                throw DataError("patch map rebuilds " + std::to_string(s.map.original_size) + " bytes, patched_size says " +
                                    std::to_string(*s.claimed),
                                16);
            if (sources.from_stream != s.stream_size - s.head_size)
                throw DataError("patch map takes " + std::to_string(sources.from_stream) + " bytes of new rows, the stored stream holds " +
                                    std::to_string(s.stream_size - s.head_size),
                                s.stream_pos);
            s.walker.emplace(s.map);
            advance();
            continue;
        }
        if (!s.seg) throw DataError("stored stream is longer than its patch map says", s.stream_pos);
        size_t k = static_cast<size_t>(std::min<uint64_t>(n, s.seg->length));
        emit(data, k);
        data += k, n -= k, s.stream_pos += k;
        s.seg->length -= k;
        if (s.seg->length == 0) advance();
    }
}

void PatchSink::finish() {
    State& s = *s_;
    s.flush();
    if (!s.walker || s.seg || s.meta_used != s.meta.size())
        throw DataError("stored stream is shorter than its patch map says", s.stream_pos);
    if (out_pos_ != s.map.original_size || s.hash.digest() != s.map.original_xxh128)
        throw Error("the file rebuilt from the reference does not match its checksum: the output is not the original");
}

Bytes read_dictionary(InputSource& ref, const std::vector<PatchExtent>& extents) {
    Bytes d;
    for (const PatchExtent& e : extents) {
        if (e.offset > ref.size() || e.length > ref.size() - e.offset)
            throw DataError("patch map: dictionary outside the reference file", 16);
        size_t at = d.size();
        d.resize(at + e.length);
        ref.read_at(e.offset, d.data() + at, e.length);
    }
    return d;
}

uint64_t rebuilt_size(const ContainerHeader& h) {
    const HeaderProperty* ref = h.property(kReferenceProperty);
    if (!ref) return h.original_size;
    const HeaderProperty* p = h.property(kPatchedSizeProperty);
    if (!p) return h.original_size;  // files written before patched_size existed: not known
    const auto id = parse_reference_identity(ref->value);
    if (!id || p->value.empty() || p->value.size() > 19 || p->value.find_first_not_of("0123456789") != std::string::npos)
        throw DataError("a --patch-from file with an unreadable patched_size or reference", 16);
    const uint64_t size = std::stoull(p->value);
    if (size > max_patch_original(id->size, h.original_size))
        throw DataError("patched_size " + p->value + " is more than a reference of " + std::to_string(id->size) +
                            " bytes and " + std::to_string(h.original_size) + " stored bytes can rebuild",
                        16);
    return size;
}

std::string ReferenceIdentity::value() const {
    return "name=" + name + ";size=" + std::to_string(size) + ";xxh128=" + xxh128;
}

std::string ReferenceIdentity::describe() const {
    return "\"" + name + "\" (" + std::to_string(size) + " bytes, xxh128 " + xxh128.substr(0, 16) + "...)";
}

ReferenceIdentity identify_reference(InputSource& ref, const std::string& name) {
    return {name, ref.size(), hash128_hex(hash128_of(ref))};
}

std::optional<ReferenceIdentity> parse_reference_identity(const std::string& v) {
    // The name comes first and may hold any character: take the fixed fields from the end.
    size_t h = v.rfind(";xxh128="), s = v.rfind(";size=", h);
    if (v.rfind("name=", 0) != 0 || h == std::string::npos || s == std::string::npos) return std::nullopt;
    ReferenceIdentity id;
    id.name = v.substr(5, s - 5);
    std::string size = v.substr(s + 6, h - s - 6);
    id.xxh128 = v.substr(h + 8);
    if (size.empty() || size.size() > 20 || size.find_first_not_of("0123456789") != std::string::npos) return std::nullopt;
    if (id.xxh128.size() != 32 || id.xxh128.find_first_not_of("0123456789abcdef") != std::string::npos) return std::nullopt;
    id.size = std::stoull(size);
    return id;
}

}  // namespace stz
