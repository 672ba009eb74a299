#include "trex/base/table.hpp"

#include <utility>

#include "trex/base/error.hpp"
#include "trex/base/html.hpp"

namespace trex {

namespace {

// A Markdown cell with its separator: " text |", or " |" when empty.
std::string markdown_cell(const std::string& text) {
    if (text.empty()) return " |";
    std::string o = " ";
    for (char c : text) o += c == '|' ? std::string("\\|") : std::string(1, c);
    return o + " |";
}

std::string markdown_line(const std::vector<std::string>& cells) {
    std::string o = "|";
    for (const auto& c : cells) o += markdown_cell(c);
    return o + "\n";
}

// "**text**" with no other ** inside.
bool wholly_bold(const std::string& text) {
    return text.size() > 4 && text.compare(0, 2, "**") == 0 && text.find("**", 2) == text.size() - 2;
}

// A cell's HTML content: escaped, a wholly **bold** cell as <b>…</b>.
std::string html_content(const std::string& text) {
    if (wholly_bold(text)) return "<b>" + html_escape(text.substr(2, text.size() - 4)) + "</b>";
    return html_escape(text);
}

std::string html_head_cell(const std::string& text, column_align align) {
    const char* style = align == column_align::right ? "right" : "left";
    return "<th style=\"text-align:" + std::string(style) + "\">" + html_escape(text) + "</th>";
}

std::string html_cell(const std::string& text, column_align align) {
    const std::string open = align == column_align::right ? "<td style=\"text-align:right\">" : "<td>";
    return open + html_content(text) + "</td>";
}

bool all_empty(const std::vector<std::string>& cells) {
    for (const auto& c : cells)
        if (!c.empty()) return false;
    return true;
}

}  // namespace

void table::add_column(const std::string& head, column_align align) {
    TREX_CHECK(rows_.empty(), "table: column '{}' added after the rows", head);
    head_.push_back(head);
    align_.push_back(align);
}

void table::add_row(std::vector<std::string> cells) {
    TREX_CHECK(cells.size() <= head_.size(), "table: a row of {} cells in a table of {} columns", cells.size(),
               head_.size());
    cells.resize(head_.size());
    rows_.push_back(std::move(cells));
}

std::string table::markdown() const {
    std::string o = markdown_line(head_) + "|";
    for (column_align a : align_) o += a == column_align::right ? "---:|" : "---|";
    o += "\n";
    for (const auto& r : rows_) o += markdown_line(r);
    return o;
}

std::string table::html() const {
    std::string o = "<table>\n";
    if (!all_empty(head_)) {
        o += "<tr>";
        for (size_t c = 0; c < head_.size(); c++) o += html_head_cell(head_[c], align_[c]);
        o += "</tr>\n";
    }
    for (const auto& r : rows_) {
        o += "<tr>";
        for (size_t c = 0; c < r.size(); c++) o += html_cell(r[c], align_[c]);
        o += "</tr>\n";
    }
    return o + "</table>\n";
}

}  // namespace trex
