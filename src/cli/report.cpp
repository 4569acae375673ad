#include "report.hpp"

#include <cmath>

namespace stzcli {

std::string human_bytes(uint64_t n) {
    const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    double v = static_cast<double>(n);
    int u = 0;
    while (v >= 1024 && u < 4) v /= 1024, ++u;
    char buf[32];
    std::snprintf(buf, sizeof buf, u == 0 ? "%.0f %s" : "%.2f %s", v, units[u]);
    return buf;
}

std::string fixed(double v, int decimals) {
    if (!std::isfinite(v)) return "null";
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
    return buf;
}

std::string json_escape(const std::string& s) {
    std::string o = "\"";
    for (unsigned char c : s) {
        if (c == '"' || c == '\\') o += '\\', o += static_cast<char>(c);
        else if (c < 0x20) {
            char b[8];
            std::snprintf(b, sizeof b, "\\u%04x", c);
            o += b;
        } else o += static_cast<char>(c);
    }
    return o + "\"";
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
    std::fprintf(stderr, "\r\033[K%s [%s] %5.1f%% %s / %s  %.1f MB/s  ETA %s  %s", label_.c_str(), bar.c_str(), pct,
                 human_bytes(done).c_str(), human_bytes(total).c_str(), mbps, eta.c_str(), section.c_str());
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
