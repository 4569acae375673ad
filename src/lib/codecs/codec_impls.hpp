// Factories of the built-in codecs; codec_registry.cpp lists them.
#pragma once
#include "../codec.hpp"

namespace stz {
std::unique_ptr<Codec> make_store_codec();
std::unique_ptr<Codec> make_rle_codec();
std::unique_ptr<Codec> make_lz4_codec();
std::unique_ptr<Codec> make_lz4hc_codec();
std::unique_ptr<Codec> make_zstd_codec();
std::unique_ptr<Codec> make_lzma_codec();
std::unique_ptr<Codec> make_trim_codec();
std::unique_ptr<Codec> make_shuffle_codec();
std::unique_ptr<Codec> make_transpose_codec();
std::unique_ptr<Codec> make_fields_codec();
std::unique_ptr<Codec> make_channel_context_codec();
std::unique_ptr<Codec> make_row_dedup_codec();
std::unique_ptr<Codec> make_rans_codec();
std::unique_ptr<Codec> make_plane_split_codec();

}  // namespace stz
