#include "bench_plot.hpp"

#include <algorithm>
#include <cmath>
#include <fstream>

#include "base/bytes.hpp"
#include "report.hpp"

namespace stzcli {

void write_plot_svg(const std::string& path, const std::vector<PlotPoint>& pts) {
    const double W = 900, H = 560, L = 70, R = 30, T = 40, B = 60;
    struct P { double x, y; const PlotPoint* p; bool front = false; };
    std::vector<P> v;
    for (const auto& p : pts)
        if (p.compressed > 0 && p.seconds > 0) v.push_back({p.raw / 1e6 / p.seconds, p.raw / p.compressed, &p});
    if (v.empty()) throw stz::Error("nothing to plot");
    double xmin = 1e300, xmax = 0, ymin = 1e300, ymax = 0;
    for (auto& q : v) xmin = std::min(xmin, q.x), xmax = std::max(xmax, q.x), ymin = std::min(ymin, q.y), ymax = std::max(ymax, q.y);
    double lx0 = std::floor(std::log10(xmin)), lx1 = std::ceil(std::log10(xmax));
    if (lx1 <= lx0) lx1 = lx0 + 1;
    double y0 = ymin - (ymax - ymin) * 0.08 - 0.001, y1 = ymax + (ymax - ymin) * 0.08 + 0.001;
    auto sx = [&](double x) { return L + (std::log10(x) - lx0) / (lx1 - lx0) * (W - L - R); };
    auto sy = [&](double y) { return H - B - (y - y0) / (y1 - y0) * (H - T - B); };
    // Pareto front: no other point is both faster and smaller.
    for (auto& a : v) {
        a.front = true;
        for (auto& b : v)
            if (&a != &b && b.x >= a.x && b.y >= a.y && (b.x > a.x || b.y > a.y)) a.front = false;
    }
    std::vector<P> front;
    for (auto& q : v)
        if (q.front) front.push_back(q);
    std::sort(front.begin(), front.end(), [](const P& a, const P& b) { return a.x < b.x; });
    std::ofstream o(path);
    if (!o) throw stz::Error("cannot write the plot");
    o << "<svg xmlns='http://www.w3.org/2000/svg' width='" << W << "' height='" << H << "' font-family='sans-serif' font-size='11'>\n"
      << "<rect width='100%' height='100%' fill='white'/>\n"
      << "<text x='" << W / 2 << "' y='22' text-anchor='middle' font-size='15'>statezip bench: ratio vs compression speed "
         "(Pareto front in red)</text>\n";
    o << "<line x1='" << L << "' y1='" << H - B << "' x2='" << W - R << "' y2='" << H - B << "' stroke='black'/>\n"
      << "<line x1='" << L << "' y1='" << T << "' x2='" << L << "' y2='" << H - B << "' stroke='black'/>\n";
    for (double e = lx0; e <= lx1; ++e) {
        double x = sx(std::pow(10, e));
        o << "<line x1='" << x << "' y1='" << T << "' x2='" << x << "' y2='" << H - B << "' stroke='#ddd'/>"
          << "<text x='" << x << "' y='" << H - B + 16 << "' text-anchor='middle'>" << fixed(std::pow(10, e), e < 0 ? 2 : 0) << "</text>\n";
    }
    for (int i = 0; i <= 5; ++i) {
        double y = y0 + (y1 - y0) * i / 5;
        o << "<line x1='" << L << "' y1='" << sy(y) << "' x2='" << W - R << "' y2='" << sy(y) << "' stroke='#eee'/>"
          << "<text x='" << L - 6 << "' y='" << sy(y) + 4 << "' text-anchor='end'>" << fixed(y, 3) << "</text>\n";
    }
    o << "<text x='" << W / 2 << "' y='" << H - 18 << "' text-anchor='middle'>compression speed, MB/s (log scale)</text>\n"
      << "<text transform='translate(18," << H / 2 << ") rotate(-90)' text-anchor='middle'>ratio (original / compressed)</text>\n";
    if (front.size() > 1) {
        o << "<polyline fill='none' stroke='#d33' stroke-width='1.5' points='";
        for (auto& q : front) o << sx(q.x) << "," << sy(q.y) << " ";
        o << "'/>\n";
    }
    for (auto& q : v) {
        std::string color = q.front ? "#d33" : q.p->external ? "#36c" : "#555";
        o << "<circle cx='" << sx(q.x) << "' cy='" << sy(q.y) << "' r='4' fill='" << color << "'><title>" << q.p->label << ": ratio "
          << fixed(q.y, 4) << ", " << fixed(q.x, 1) << " MB/s</title></circle>"
          << "<text x='" << sx(q.x) + 6 << "' y='" << sy(q.y) - 5 << "' fill='" << color << "' font-size='9'>" << q.p->label << "</text>\n";
    }
    o << "</svg>\n";
}

}  // namespace stzcli
