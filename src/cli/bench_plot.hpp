// Ratio-vs-speed chart of bench results as a standalone SVG (opens in any browser).
#pragma once
#include <string>
#include <vector>

namespace stzcli {

struct PlotPoint {
    std::string label;
    double raw = 0, compressed = 0, seconds = 0;  // totals over the benchmarked files
    bool external = false;
};

void write_plot_svg(const std::string& path, const std::vector<PlotPoint>& points);

}  // namespace stzcli
