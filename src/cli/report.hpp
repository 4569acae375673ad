// Small output helpers for the CLI: sizes, JSON strings, progress line.
#pragma once
#include <chrono>
#include <cstdio>
#include <string>

namespace stzcli {

std::string human_bytes(uint64_t n);
// A JSON string literal: control characters (C0, DEL, C1) escaped as \u00XX; bytes that are
// not valid UTF-8 become \u00XX of the byte value, so the document is always valid JSON.
std::string json_escape(const std::string& s);
// For human output (terminal): control characters (C0 incl. newline and ESC, DEL, C1) and
// bytes that are not valid UTF-8 are shown as \n, \t, \xNN; printable UTF-8 passes.
std::string printable(const std::string& s);
std::string fixed(double v, int decimals);
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
