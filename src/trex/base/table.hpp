// Tables of the reports (train, eval, recipe): a header row, rows of plain-text cells and each column's alignment,
// rendered as a Markdown pipe table and as an HTML <table>, so that both formats show the same rows.
//
// Markdown: "| a | b |" lines, the separator "|---|---:|" (---: for a right-aligned column), '|' in a cell written
// as "\|", an empty cell as "| |". HTML: every cell escaped with html_escape; the header row left out when every
// header is empty; a right-aligned column's cells carry style="text-align:right", a left-aligned column's header
// style="text-align:left" (<th> is centred by default). A cell that is wholly **bold** in Markdown is <b>bold</b>
// in HTML.
#pragma once

#include <string>
#include <vector>

namespace trex {

enum class column_align { left, right };

class table {
   public:
    // Appends a column (add the columns before the rows).
    void add_column(const std::string& head, column_align align = column_align::left);
    // Appends a row of at most one cell per column; missing cells at its end are empty. More cells than columns
    // throws trex::error.
    void add_row(std::vector<std::string> cells);

    std::string markdown() const;  // one line per row, each ending in '\n'
    std::string html() const;      // "<table>\n" ... "</table>\n"

   private:
    std::vector<std::string> head_;
    std::vector<column_align> align_;
    std::vector<std::vector<std::string>> rows_;
};

}  // namespace trex
