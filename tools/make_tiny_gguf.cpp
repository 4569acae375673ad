// make-tiny-gguf: writes a tiny Llama model (GGUF v3, random f32 weights, byte-fallback SPM
// vocabulary) that llama.cpp loads, so the llama integration tests run without ../shared.
// Head size 32, so block-quantised KV caches (q8_0, q4_0, ...) are allowed.
//   make-tiny-gguf OUT.gguf [--layers N] [--seed N]
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <random>
#include <string>
#include <vector>

namespace {

struct Writer {
    std::vector<uint8_t> b;
    template <class T> void put(T v) {
        size_t n = b.size();
        b.resize(n + sizeof v);
        std::memcpy(b.data() + n, &v, sizeof v);
    }
    void str(const std::string& s) {
        put<uint64_t>(s.size());
        b.insert(b.end(), s.begin(), s.end());
    }
};

enum : uint32_t { U32 = 4, I32 = 5, F32 = 6, STRING = 8, ARRAY = 9 };

struct Tensor {
    std::string name;
    std::vector<uint64_t> ne;
    std::vector<float> data;
};

// The model's shape (head size 32, so that block-quantised KV caches are allowed).
struct Dims {
    uint32_t n_layer = 2;
    static constexpr uint32_t n_embd = 64, n_head = 2, n_head_kv = 2, n_ff = 128, n_ctx = 4096;
    static constexpr uint32_t head = n_embd / n_head, n_embd_kv = head * n_head_kv;
};

// Vocabulary: unk, bos, eos, 256 byte tokens, then single characters (with and without
// the SPM word-start mark) so ordinary text tokenises without falling back to bytes.
struct Vocab {
    std::vector<std::string> tokens = {"<unk>", "<s>", "</s>"};
    std::vector<int32_t> types = {2, 3, 3};
    std::vector<float> scores;
};
Vocab make_vocab() {
    Vocab v;
    for (int c = 0; c < 256; ++c) {
        char buf[8];
        std::snprintf(buf, sizeof buf, "<0x%02X>", c);
        v.tokens.push_back(buf);
        v.types.push_back(6);
    }
    const std::string mark = "\xe2\x96\x81";  // U+2581, SPM's space
    v.tokens.push_back(mark);
    v.types.push_back(1);
    for (char c = 33; c < 127; ++c) {
        v.tokens.push_back(std::string(1, c));
        v.types.push_back(1);
        v.tokens.push_back(mark + std::string(1, c));
        v.types.push_back(1);
    }
    v.scores.resize(v.tokens.size());
    for (size_t i = 0; i < v.scores.size(); ++i) v.scores[i] = -static_cast<float>(i);
    return v;
}

// The weights: random normal (sigma 0.08) from `seed`, norms all ones.
std::vector<Tensor> make_tensors(const Dims& d, uint64_t n_vocab, uint32_t seed) {
    std::mt19937 rng(seed);
    std::normal_distribution<float> nd(0.0f, 0.08f);
    std::vector<Tensor> ts;
    auto add = [&](std::string name, std::vector<uint64_t> ne, bool ones) {
        uint64_t n = 1;
        for (auto x : ne) n *= x;
        Tensor t{std::move(name), std::move(ne), std::vector<float>(n)};
        for (auto& x : t.data) x = ones ? 1.0f : nd(rng);
        ts.push_back(std::move(t));
    };
    add("token_embd.weight", {d.n_embd, n_vocab}, false);
    add("output_norm.weight", {d.n_embd}, true);
    add("output.weight", {d.n_embd, n_vocab}, false);
    for (uint32_t l = 0; l < d.n_layer; ++l) {
        std::string p = "blk." + std::to_string(l) + ".";
        add(p + "attn_norm.weight", {d.n_embd}, true);
        add(p + "attn_q.weight", {d.n_embd, d.n_embd}, false);
        add(p + "attn_k.weight", {d.n_embd, d.n_embd_kv}, false);
        add(p + "attn_v.weight", {d.n_embd, d.n_embd_kv}, false);
        add(p + "attn_output.weight", {d.n_embd, d.n_embd}, false);
        add(p + "ffn_norm.weight", {d.n_embd}, true);
        add(p + "ffn_gate.weight", {d.n_embd, d.n_ff}, false);
        add(p + "ffn_up.weight", {d.n_embd, d.n_ff}, false);
        add(p + "ffn_down.weight", {d.n_ff, d.n_embd}, false);
    }
    return ts;
}

// The key-value metadata (architecture, shape, tokenizer); `n_kv` gets how many keys.
Writer metadata(const Dims& d, const Vocab& v, uint64_t& n_kv) {
    const uint64_t n_vocab = v.tokens.size();
    Writer kv;
    n_kv = 0;
    auto key = [&](const std::string& k, uint32_t type) {
        kv.str(k);
        kv.put<uint32_t>(type);
        ++n_kv;
    };
    key("general.architecture", STRING), kv.str("llama");
    key("general.name", STRING), kv.str("statezip tiny random llama");
    key("llama.context_length", U32), kv.put<uint32_t>(d.n_ctx);
    key("llama.embedding_length", U32), kv.put<uint32_t>(d.n_embd);
    key("llama.block_count", U32), kv.put<uint32_t>(d.n_layer);
    key("llama.feed_forward_length", U32), kv.put<uint32_t>(d.n_ff);
    key("llama.attention.head_count", U32), kv.put<uint32_t>(d.n_head);
    key("llama.attention.head_count_kv", U32), kv.put<uint32_t>(d.n_head_kv);
    key("llama.rope.dimension_count", U32), kv.put<uint32_t>(d.head);
    key("llama.attention.layer_norm_rms_epsilon", F32), kv.put<float>(1e-5f);
    key("tokenizer.ggml.model", STRING), kv.str("llama");
    key("tokenizer.ggml.tokens", ARRAY), kv.put<uint32_t>(STRING), kv.put<uint64_t>(n_vocab);
    for (const auto& t : v.tokens) kv.str(t);
    key("tokenizer.ggml.scores", ARRAY), kv.put<uint32_t>(F32), kv.put<uint64_t>(n_vocab);
    for (float s : v.scores) kv.put<float>(s);
    key("tokenizer.ggml.token_type", ARRAY), kv.put<uint32_t>(I32), kv.put<uint64_t>(n_vocab);
    for (int32_t t : v.types) kv.put<int32_t>(t);
    key("tokenizer.ggml.bos_token_id", U32), kv.put<uint32_t>(1);
    key("tokenizer.ggml.eos_token_id", U32), kv.put<uint32_t>(2);
    key("tokenizer.ggml.unknown_token_id", U32), kv.put<uint32_t>(0);
    return kv;
}

// The tensor infos, then the data, each aligned to 32 bytes.
void put_tensors(Writer& w, const std::vector<Tensor>& ts) {
    uint64_t offset = 0;
    for (const auto& t : ts) {
        w.str(t.name);
        w.put<uint32_t>(static_cast<uint32_t>(t.ne.size()));
        for (auto d : t.ne) w.put<uint64_t>(d);
        w.put<uint32_t>(0);  // f32
        w.put<uint64_t>(offset);
        offset += (t.data.size() * 4 + 31) / 32 * 32;
    }
    while (w.b.size() % 32) w.b.push_back(0);
    for (const auto& t : ts) {
        size_t n = w.b.size();
        w.b.resize(n + t.data.size() * 4);
        std::memcpy(w.b.data() + n, t.data.data(), t.data.size() * 4);
        while (w.b.size() % 32) w.b.push_back(0);
    }
}

}  // namespace

int main(int argc, char** argv) {
    if (argc < 2) {
        std::fprintf(stderr, "usage: make-tiny-gguf OUT.gguf [--layers N] [--seed N]\n");
        return 2;
    }
    Dims d;
    uint32_t seed = 1;
    for (int i = 2; i + 1 < argc; i += 2) {
        std::string a = argv[i];
        if (a == "--layers") d.n_layer = std::stoul(argv[i + 1]);
        else if (a == "--seed") seed = std::stoul(argv[i + 1]);
    }
    const Vocab vocab = make_vocab();
    const std::vector<Tensor> ts = make_tensors(d, vocab.tokens.size(), seed);
    Writer w;
    w.put<uint32_t>(0x46554747);  // "GGUF"
    w.put<uint32_t>(3);
    w.put<uint64_t>(ts.size());
    uint64_t n_kv = 0;
    const Writer kv = metadata(d, vocab, n_kv);
    w.put<uint64_t>(n_kv);
    w.b.insert(w.b.end(), kv.b.begin(), kv.b.end());
    put_tensors(w, ts);
    std::ofstream f(argv[1], std::ios::binary);
    f.write(reinterpret_cast<const char*>(w.b.data()), static_cast<std::streamsize>(w.b.size()));
    if (!f) {
        std::fprintf(stderr, "make-tiny-gguf: cannot write %s\n", argv[1]);
        return 1;
    }
    return 0;
}
