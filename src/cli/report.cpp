#include "report.hpp"

#include <cmath>

namespace stzcli {

std::string human_bytes(uint64_t n) {
    const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
    double v = static_cast<double>(n);
    int u = 0;
    while (v >= 1024 && u < 6) v /= 1024, ++u;
    char buf[32];
    std::snprintf(buf, sizeof buf, u == 0 ? "%.0f %s" : "%.2f %s", v, units[u]);
    return buf;
}

std::string printable(const std::string& s) {
    std::string o;
    for (size_t i = 0; i < s.size();) {
        unsigned char c = static_cast<unsigned char>(s[i]);
        if (size_t n = printable_utf8_length(s, i)) {
            o.append(s, i, n), i += n;
        } else if (c == '\n' || c == '\t' || c == '\r') {
            o += '\\', o += c == '\n' ? 'n' : c == '\t' ? 't' : 'r', ++i;
        } else {
            char b[8];
            std::snprintf(b, sizeof b, "\\x%02x", c);
            o += b, ++i;
        }
    }
    return o;
}

std::string format_line(const std::string& format, int64_t version, const std::string& detail) {
    std::string s = format;
    if (version >= 0) s += " v" + std::to_string(version);
    if (!detail.empty()) s += " (" + detail + ")";
    return printable(s);
}

void Progress::update(uint64_t done, uint64_t total, const std::string& section) {
    if (!enabled_) return;
    auto now = std::chrono::steady_clock::now();
    if (drawn_ && now - last_ < std::chrono::milliseconds(100) && done < total) return;
    last_ = now;
    double secs = std::chrono::duration<double>(now - start_).count();
    double mbps = secs > 0 ? done / 1e6 / secs : 0;
    double pct = total ? 100.0 * done / total : 100.0;
    std::string eta = "--";
    if (mbps > 0 && total >= done) {
        int s = static_cast<int>((total - done) / 1e6 / mbps);
        char b[32];
        std::snprintf(b, sizeof b, "%d:%02d", s / 60, s % 60);
        eta = b;
    }
    const int width = 24;
    int fill = static_cast<int>(pct / 100 * width);
    std::string bar(fill, '#');
    bar.resize(width, '.');
    std::fprintf(stderr, "\r\033[K%s [%s] %5.1f%% %s / %s  %.1f MB/s  ETA %s  %s", printable(label_).c_str(), bar.c_str(), pct,
                 human_bytes(done).c_str(), human_bytes(total).c_str(), mbps, eta.c_str(), printable(section).c_str());
    std::fflush(stderr);
    drawn_ = true;
}

void Progress::finish() {
    if (drawn_) {
        std::fprintf(stderr, "\r\033[K");
        std::fflush(stderr);
        drawn_ = false;
    }
}

}  // namespace stzcli
