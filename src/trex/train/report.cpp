#include "trex/train/report.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "trex/base/files.hpp"
#include "trex/base/html.hpp"
#include "trex/base/table.hpp"

namespace fs = std::filesystem;

namespace trex {

namespace {

std::string esc(const std::string& s) {
    return html_escape(s);
}

double nice_step(double range, int ticks) {
    const double raw = range / std::max(ticks, 1);
    const double mag = std::pow(10.0, std::floor(std::log10(raw > 0 ? raw : 1.0)));
    for (double m : {1.0, 2.0, 5.0, 10.0})
        if (raw <= m * mag) return m * mag;
    return 10.0 * mag;
}

// Sums over the logged steps of a run (metrics.jsonl).
struct run_totals {
    int64_t skipped = 0, spikes = 0;
    double tps_sum = 0, mfu_sum = 0, rss = 0;
    int64_t mfu_n = 0;  // steps with an MFU (null where the peak could not be validated)
};

// The report's two-column summary: losses of the first and last logged steps, throughput, MFU, memory, anomalies.
table summary_table(const std::vector<nlohmann::json>& rows, const run_totals& t, double peak_gflops,
                    const std::string& peak_name) {
    const size_t n = rows.size();
    const auto& last = n ? rows.back() : nlohmann::json::object();
    const auto& first = n ? rows.front() : nlohmann::json::object();
    table summary;
    summary.add_column("");
    summary.add_column("");
    summary.add_row({"steps logged", fmt::format("{} (last step {})", n, last.value("step", 0))});
    summary.add_row({"loss", fmt::format("{:.4f} → {:.4f}", first.value("loss", NAN), last.value("loss", NAN))});
    summary.add_row({"LM / MTP / balance / indexer (last)",
                     fmt::format("{:.4f} / {:.4f} / {:.6f} / {:.4f}", last.value("lm", NAN), last.value("mtp", NAN),
                                 last.value("bal", NAN), last.value("idx", NAN))});
    summary.add_row({"tokens seen", fmt::format("{}", last.value("tokens", 0))});
    summary.add_row({"mean tokens/s", fmt::format("{:.1f}", n ? t.tps_sum / n : 0.0)});
    if (t.mfu_n > 0)
        summary.add_row({"mean MFU", fmt::format("{:.1f}% of {:.1f} GFLOP/s (measured {} peak; {} of {} steps)",
                                                 100 * t.mfu_sum / t.mfu_n, peak_gflops, peak_name, t.mfu_n, n)});
    else
        summary.add_row(
            {"mean MFU", "not reported (the peak could not be validated on this machine: see the run's log)"});
    if (t.rss > 0) summary.add_row({"peak resident memory (rank 0)", fmt::format("{:.1f} MiB", t.rss)});
    summary.add_row({"skipped updates (non-finite)", fmt::format("{}", t.skipped)});
    summary.add_row({"loss spikes", fmt::format("{}", t.spikes)});
    return summary;
}

}  // namespace

std::string svg_line_chart(const std::string& title, const std::string& y_label, const std::vector<svg_series>& ss,
                           bool log_y) {
    const double W = 640, H = 320, L = 64, R = 16, T = 32, B = 40;
    double x0 = 1e300, x1 = -1e300, y0 = 1e300, y1 = -1e300;
    auto fy = [&](double v) { return log_y ? std::log10(std::max(v, 1e-12)) : v; };
    for (const auto& s : ss)
        for (size_t i = 0; i < s.x.size(); i++) {
            if (!std::isfinite(s.y[i])) continue;
            x0 = std::min(x0, s.x[i]);
            x1 = std::max(x1, s.x[i]);
            y0 = std::min(y0, fy(s.y[i]));
            y1 = std::max(y1, fy(s.y[i]));
        }
    if (x0 > x1) x0 = 0, x1 = 1, y0 = 0, y1 = 1;
    if (x1 == x0) x1 = x0 + 1;
    if (y1 == y0) y1 = y0 + 1;
    const double pad = 0.05 * (y1 - y0);
    y0 -= pad;
    y1 += pad;
    auto px = [&](double x) { return L + (x - x0) / (x1 - x0) * (W - L - R); };
    auto py = [&](double y) { return T + (1.0 - (fy(y) - y0) / (y1 - y0)) * (H - T - B); };
    auto py_raw = [&](double yv) { return T + (1.0 - (yv - y0) / (y1 - y0)) * (H - T - B); };
    std::ostringstream o;
    o << fmt::format(R"svg(<svg xmlns="http://www.w3.org/2000/svg" width="{}" height="{}" viewBox="0 0 {} {}" )svg"
                     R"svg(font-family="sans-serif" font-size="11">)svg",
                     W, H, W, H)
      << "\n";
    o << fmt::format(R"svg(<rect width="{}" height="{}" fill="white"/>)svg", W, H) << "\n";
    o << fmt::format(R"svg(<text x="{}" y="18" font-size="13" font-weight="bold">{}</text>)svg", L, esc(title)) << "\n";
    // axes and ticks
    o << fmt::format(R"svg(<line x1="{}" y1="{}" x2="{}" y2="{}" stroke="#333"/>)svg", L, H - B, W - R, H - B) << "\n";
    o << fmt::format(R"svg(<line x1="{}" y1="{}" x2="{}" y2="{}" stroke="#333"/>)svg", L, T, L, H - B) << "\n";
    const double xs = nice_step(x1 - x0, 6);
    for (double x = std::ceil(x0 / xs) * xs; x <= x1 + 1e-9; x += xs)
        o << fmt::format(R"svg(<line x1="{0:.1f}" y1="{1}" x2="{0:.1f}" y2="{2}" stroke="#ddd"/>)svg"
                         R"svg(<text x="{0:.1f}" y="{3}" text-anchor="middle">{4:g}</text>)svg",
                         px(x), T, H - B, H - B + 14, x)
          << "\n";
    const double ys = nice_step(y1 - y0, 5);
    for (double y = std::ceil(y0 / ys) * ys; y <= y1 + 1e-9; y += ys)
        o << fmt::format(R"svg(<line x1="{0}" y1="{1:.1f}" x2="{2}" y2="{1:.1f}" stroke="#ddd"/>)svg"
                         R"svg(<text x="{3}" y="{4:.1f}" text-anchor="end">{5:.4g}</text>)svg",
                         L, py_raw(y), W - R, L - 4, py_raw(y) + 4, log_y ? std::pow(10.0, y) : y)
          << "\n";
    o << fmt::format(R"svg(<text x="{}" y="{}" text-anchor="middle">step</text>)svg", (L + W - R) / 2, H - 8) << "\n";
    o << fmt::format(R"svg(<text x="14" y="{}" transform="rotate(-90 14 {})" text-anchor="middle">{}</text>)svg",
                     (T + H - B) / 2, (T + H - B) / 2, esc(y_label))
      << "\n";
    // series
    double ly = T + 4;
    for (const auto& s : ss) {
        std::string pts;
        for (size_t i = 0; i < s.x.size(); i++)
            if (std::isfinite(s.y[i])) pts += fmt::format("{:.1f},{:.1f} ", px(s.x[i]), py(s.y[i]));
        o << fmt::format(R"svg(<polyline fill="none" stroke="{}" stroke-width="1.5" points="{}"/>)svg", s.color, pts)
          << "\n";
        o << fmt::format(R"svg(<rect x="{}" y="{}" width="10" height="3" fill="{}"/><text x="{}" y="{}">{}</text>)svg",
                         W - R - 120, ly, s.color, W - R - 106, ly + 5, esc(s.label))
          << "\n";
        ly += 14;
    }
    o << "</svg>\n";
    return o.str();
}

std::string svg_heat_map(const std::string& title, const std::vector<std::vector<double>>& v,
                         const std::string& row_label, const std::string& col_label) {
    const size_t rows = v.size(), cols = rows ? v[0].size() : 0;
    const double cell = std::max(4.0, std::min(24.0, 560.0 / std::max<size_t>(cols, 1)));
    const double L = 70, T = 32, W = L + cell * cols + 90, H = T + cell * rows + 36;
    double mx = 0;
    for (const auto& r : v)
        for (double x : r) mx = std::max(mx, x);
    std::ostringstream o;
    o << fmt::format(R"svg(<svg xmlns="http://www.w3.org/2000/svg" width="{}" height="{}" font-family="sans-serif" )svg"
                     R"svg(font-size="11">)svg",
                     W, H)
      << "\n";
    o << fmt::format(R"svg(<rect width="{}" height="{}" fill="white"/>)svg", W, H) << "\n";
    o << fmt::format(R"svg(<text x="{}" y="18" font-size="13" font-weight="bold">{}</text>)svg", L, esc(title)) << "\n";
    for (size_t r = 0; r < rows; r++) {
        o << fmt::format(R"svg(<text x="{}" y="{:.1f}" text-anchor="end">{} {}</text>)svg", L - 4,
                         T + cell * r + cell * 0.7, esc(row_label), r)
          << "\n";
        for (size_t c = 0; c < cols; c++) {
            const double f = mx > 0 ? v[r][c] / mx : 0.0;
            const int red = (int)std::lround(255 * f), blue = (int)std::lround(255 * (1 - f));
            o << fmt::format(R"svg(<rect x="{:.1f}" y="{:.1f}" width="{:.1f}" height="{:.1f}" fill="rgb({},{},{})">)svg"
                             R"svg(<title>{} {}, {} {}: {:g}</title></rect>)svg",
                             L + cell * c, T + cell * r, cell, cell, red, 64, blue, esc(row_label), r, esc(col_label),
                             c, v[r][c])
              << "\n";
        }
    }
    o << fmt::format(R"svg(<text x="{:.1f}" y="{:.1f}" text-anchor="middle">{} (red = most tokens)</text>)svg",
                     L + cell * cols / 2, T + cell * rows + 20, esc(col_label))
      << "\n</svg>\n";
    return o.str();
}

std::string write_run_report(const std::string& out_dir, const std::string& name, const std::string& flops_formula,
                             double peak_gflops, const std::string& peak_name) {
    std::vector<nlohmann::json> rows;
    {
        std::istringstream in(read_file((fs::path(out_dir) / "metrics.jsonl").string()));
        std::string line;
        while (std::getline(in, line))
            if (!line.empty()) rows.push_back(nlohmann::json::parse(line));
    }
    svg_series total{"total", "#1f77b4", {}, {}}, lm{"LM", "#2ca02c", {}, {}}, mtp{"MTP", "#ff7f0e", {}, {}},
        tps{"tokens/s", "#9467bd", {}, {}}, gn{"grad norm", "#d62728", {}, {}};
    run_totals t;
    std::vector<std::vector<double>> heat;
    for (const auto& r : rows) {
        const double s = r.value("step", 0.0);
        total.x.push_back(s), total.y.push_back(r.value("loss", NAN));
        lm.x.push_back(s), lm.y.push_back(r.value("lm", NAN));
        mtp.x.push_back(s), mtp.y.push_back(r.value("mtp", NAN));
        tps.x.push_back(s), tps.y.push_back(r.value("tokens_per_s", NAN));
        gn.x.push_back(s), gn.y.push_back(r.value("grad_norm", NAN));
        t.skipped += r.value("skipped", false);
        t.spikes += r.value("spike", false);
        t.tps_sum += r.value("tokens_per_s", 0.0);
        if (r.contains("mfu") && r["mfu"].is_number()) {
            t.mfu_sum += r["mfu"].get<double>();
            t.mfu_n++;
        }
        t.rss = std::max(t.rss, r.value("peak_rss_mib", 0.0));  // absent in metrics of older runs
    }
    // expert load heat map: tokens per expert summed over the last (up to) 20 logged steps
    for (size_t i = rows.size() > 20 ? rows.size() - 20 : 0; i < rows.size(); i++) {
        if (!rows[i].contains("expert_load")) continue;
        const auto& el = rows[i]["expert_load"];
        if (heat.empty()) heat.assign(el.size(), std::vector<double>(el.empty() ? 0 : el[0].size(), 0.0));
        for (size_t l = 0; l < el.size() && l < heat.size(); l++)
            for (size_t e = 0; e < el[l].size() && e < heat[l].size(); e++) heat[l][e] += el[l][e].get<double>();
    }
    const fs::path d(out_dir);
    const std::string loss_svg = svg_line_chart("Loss", "loss", {total, lm, mtp});
    const std::string tps_svg = svg_line_chart("Throughput", "tokens/s", {tps});
    const std::string gn_svg = svg_line_chart("Gradient norm (before clipping)", "norm", {gn}, true);
    const std::string heat_svg =
        heat.empty() ? "" : svg_heat_map("Expert load (last 20 logged steps)", heat, "layer", "expert");
    write_file_atomic((d / "loss.svg").string(), loss_svg);
    write_file_atomic((d / "throughput.svg").string(), tps_svg);
    write_file_atomic((d / "grad_norm.svg").string(), gn_svg);
    if (!heat_svg.empty()) write_file_atomic((d / "expert_load.svg").string(), heat_svg);

    const table summary = summary_table(rows, t, peak_gflops, peak_name);
    std::string md;
    md += fmt::format("# Run report: {}\n\n", name);
    md += summary.markdown() + "\n";
    md += fmt::format("MFU formula: {}\n\n", flops_formula);
    md += "![loss](loss.svg)\n\n![throughput](throughput.svg)\n\n![grad norm](grad_norm.svg)\n\n";
    if (!heat_svg.empty()) md += "![expert load](expert_load.svg)\n";
    write_file_atomic((d / "report.md").string(), md);

    std::string html = "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>" + esc(name) +
                       "</title><style>body{font-family:sans-serif;max-width:960px;margin:2em auto}"
                       "table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:4px 8px}</style></head>"
                       "<body>\n";
    html += fmt::format("<h1>Run report: {}</h1>\n", esc(name)) + summary.html();
    html += "<p>MFU formula: " + esc(flops_formula) + "</p>\n";
    html += loss_svg + tps_svg + gn_svg + heat_svg + "</body></html>\n";
    write_file_atomic((d / "report.html").string(), html);
    return (d / "report.md").string();
}

}  // namespace trex
