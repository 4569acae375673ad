// Small output helpers for the CLI: sizes, JSON strings, progress line.
#pragma once
#include <chrono>
#include <cstdio>
#include <string>

namespace stzcli {

std::string human_bytes(uint64_t n);
std::string json_escape(const std::string& s);
std::string fixed(double v, int decimals);

// Progress line on stderr: bytes done / total, MB/s, ETA, current section. Redraws at most
// 10 times a second; `finish` clears the line.
class Progress {
public:
    Progress(bool enabled, std::string label) : enabled_(enabled), label_(std::move(label)) {}
    ~Progress() { finish(); }
    void update(uint64_t done, uint64_t total, const std::string& section);
    void finish();

private:
    bool enabled_;
    bool drawn_ = false;
    std::string label_;
    std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
    std::chrono::steady_clock::time_point last_{};
};

}  // namespace stzcli
