// Small output helpers for the CLI: sizes, JSON strings, progress line.
#pragma once
#include <chrono>
#include <cstdio>
#include <string>

#include "base/json_text.hpp"

namespace stzcli {

std::string human_bytes(uint64_t n);
using stz::json_escape;  // json_text.hpp
using stz::fixed;
using stz::printable_utf8_length;
// For human output (terminal): control characters (C0 incl. newline and ESC, DEL, C1) and
// bytes that are not valid UTF-8 are shown as \n, \t, \xNN; printable UTF-8 passes.
std::string printable(const std::string& s);
// "format vN (detail)" from header strings, escaped for a terminal; version < 0 = none.
std::string format_line(const std::string& format, int64_t version, const std::string& detail);

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
