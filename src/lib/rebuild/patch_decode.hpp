// Reading a `--patch-from` file (patch.hpp has the writer): what its header says about the
// reference it needs, and PatchSink, which rebuilds the original from the stored stream and REF.
// The engine's decoder calls it when a header names a reference, so it sits below the engine
// and needs only the container's header: the writer, which runs the engine, sits above it.
#pragma once
#include <memory>
#include <optional>

#include "container/container.hpp"

namespace stz {

inline constexpr const char* kReferenceProperty = "reference";
inline constexpr const char* kPatchedSizeProperty = "patched_size";
inline constexpr const char* kPatchMapSection = "patch.map";

// REF's identity as stored: "name=<as given>;size=<bytes>;xxh128=<32 hex digits>".
struct ReferenceIdentity {
    std::string name;
    uint64_t size = 0;
    std::string xxh128;  // 32 lower-case hex digits
    std::string value() const;
    std::string describe() const;  // `"name" (N bytes, xxh128 0123456789ab…)`
};
ReferenceIdentity identify_reference(InputSource& ref, const std::string& name);
std::optional<ReferenceIdentity> parse_reference_identity(const std::string& value);

// The size of the file a container rebuilds: for a --patch-from file its `patched_size`
// (the header's original_size is that of the stored stream), else original_size. Throws
// DataError for a --patch-from file whose patched_size is unreadable or more than
// its reference (at the size the header names) and stored stream can rebuild
// (max_patch_original), so that a caller may size a buffer by it.
uint64_t rebuilt_size(const ContainerHeader& h);

// The reference is missing or is not the one a file needs (message: one line, names it).
struct ReferenceError : Error {
    using Error::Error;
};

struct PatchMap;
struct PatchSources;
// The map and the meta bytes from the content of a head's zstd frame (docs/FORMAT.md), the
// token tail restored (token_model.hpp); `base` is for error offsets. The map is checked
// against REF (check_patch_sources) and the meta bytes it takes; an original larger than
// `max_original` is refused. `sources` gets what it takes from each source. Used by
// PatchSink, and by the tests and the fuzz target on damaged maps.
PatchMap decode_patch_content(ByteSpan content, InputSource& ref, Bytes& meta, uint64_t base,
                              uint64_t max_original = UINT64_MAX, PatchSources* sources = nullptr);

// Rebuilds the original from the stored stream (fed in order) and REF: used by
// decompress_stream when the header has a `reference` property. Checks REF's identity first
// (throws ReferenceError), then the map as it arrives, before anything is written: its size
// against patched_size and what REF and the stored stream can rebuild, every copy against
// REF's layout and size, the new rows it takes against the stored stream's size; and the
// rebuilt file's size and hash at finish().
class PatchSink final : public OutputSink {
public:
    PatchSink(const ContainerHeader& h, InputSource* ref, OutputSink& out);
    void write(const uint8_t* data, size_t n) override;
    void finish();
    uint64_t bytes_out() const { return out_pos_; }

private:
    struct State;
    std::shared_ptr<State> s_;
    uint64_t out_pos_ = 0;
};

}  // namespace stz
