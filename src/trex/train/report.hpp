// The run report: <out>/report.md and <out>/report.html from <out>/metrics.jsonl, with SVG charts (loss curves,
// throughput, expert-load heat map) written next to them and inlined in the HTML. No JavaScript.
#pragma once

#include <string>
#include <vector>

namespace trex {

// Returns the path of report.md. peak_name: what MFU was measured against ("fp32 FMA", "bf16 dot-product").
std::string write_run_report(const std::string& out_dir, const std::string& name, const std::string& flops_formula,
                             double peak_gflops, const std::string& peak_name = "fp32 FMA");

// A line chart as a standalone SVG: one polyline per series over a shared x axis.
struct svg_series {
    std::string label;
    std::string color;
    std::vector<double> x, y;
};
std::string svg_line_chart(const std::string& title, const std::string& y_label, const std::vector<svg_series>& s,
                           bool log_y = false);
// A heat map (rows × cols, values ≥ 0) as SVG.
std::string svg_heat_map(const std::string& title, const std::vector<std::vector<double>>& values,
                         const std::string& row_label, const std::string& col_label);

}  // namespace trex
