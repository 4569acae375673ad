// JSON text helpers shared by inspect --json, bench --json and the C API.
#pragma once
#include <string>

namespace stz {

// A JSON string literal: control characters (C0, DEL, C1) escaped as \u00XX; bytes that are
// not valid UTF-8 become \u00XX of the byte value, so the document is always valid JSON.
std::string json_escape(const std::string& s);
// Length of the valid UTF-8 sequence at s[i] whose code point is printable (not C0, DEL or
// C1), or 0 when the byte there must be escaped.
size_t printable_utf8_length(const std::string& s, size_t i);
// "%.*f", or "null" when not finite (JSON has no NaN).
std::string fixed(double v, int decimals);

}  // namespace stz
