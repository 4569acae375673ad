#include "json_text.hpp"

#include <cmath>
#include <cstdint>
#include <cstdio>

namespace stz {

std::string fixed(double v, int decimals) {
    if (!std::isfinite(v)) return "null";
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
    return buf;
}

// Length of the valid UTF-8 sequence at s[i] whose code point is printable (not C0, DEL or
// C1), or 0 when the byte there must be escaped.
size_t printable_utf8_length(const std::string& s, size_t i) {
    auto b = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
    unsigned char c = b(i);
    if (c >= 0x20 && c < 0x7f) return 1;
    size_t n = c >= 0xf0 && c <= 0xf4 ? 4 : c >= 0xe0 ? (c < 0xf0 ? 3 : 0) : c >= 0xc2 ? 2 : 0;
    if (n == 0 || i + n > s.size()) return 0;
    uint32_t cp = c & (0xff >> (n + 1));
    for (size_t k = 1; k < n; ++k) {
        if ((b(i + k) & 0xc0) != 0x80) return 0;
        cp = cp << 6 | (b(i + k) & 0x3f);
    }
    const uint32_t min_cp[] = {0, 0, 0x80, 0x800, 0x10000};
    if (cp < min_cp[n] || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff) || cp < 0xa0) return 0;
    return n;
}

std::string json_escape(const std::string& s) {
    std::string o = "\"";
    for (size_t i = 0; i < s.size();) {
        unsigned char c = static_cast<unsigned char>(s[i]);
        if (c == '"' || c == '\\') {
            o += '\\', o += static_cast<char>(c), ++i;
        } else if (size_t n = printable_utf8_length(s, i)) {
            o.append(s, i, n), i += n;
        } else {
            // A C1 control (U+0080..U+009F, bytes C2 80..C2 9F) is one character; any other
            // byte here is a control or not UTF-8 and stands for itself (\u00XX).
            const bool c1 = c == 0xc2 && i + 1 < s.size() && (static_cast<unsigned char>(s[i + 1]) & 0xe0) == 0x80;
            if (c1) c = static_cast<unsigned char>(s[++i]);
            char b[8];
            std::snprintf(b, sizeof b, "\\u%04x", c);
            o += b, ++i;
        }
    }
    return o + "\"";
}

}  // namespace stz
