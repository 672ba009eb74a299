// The reports' table (base/table.hpp): Markdown pipe tables with per-column alignment, escaped '|' and empty cells;
// HTML with escaped cells, wholly **bold** cells as <b>, alignment styles and no header row when every header is
// empty; malformed tables refused.
#include "trex/base/table.hpp"

#include <gtest/gtest.h>

#include <string>

#include "trex/base/error.hpp"

using trex::column_align;
using trex::table;

namespace {

// name (left), value (right)
table two_columns() {
    table t;
    t.add_column("name");
    t.add_column("value", column_align::right);
    return t;
}

// Two columns with empty headers and one row (key, value).
table headless_row(const std::string& key, const std::string& value) {
    table t;
    t.add_column("");
    t.add_column("");
    t.add_row({key, value});
    return t;
}

}  // namespace

TEST(Table, MarkdownHasTheAlignmentSeparator) {
    table t = two_columns();
    t.add_row({"a", "1"});
    t.add_row({"b", "22"});
    EXPECT_EQ(t.markdown(), "| name | value |\n|---|---:|\n| a | 1 |\n| b | 22 |\n");
}

TEST(Table, MarkdownEscapesPipesAndWritesEmptyCellsAsOneSpace) {
    table t = two_columns();
    t.add_row({"a|b", ""});
    t.add_row({"c"});  // missing cells at the end are empty
    EXPECT_EQ(t.markdown(), "| name | value |\n|---|---:|\n| a\\|b | |\n| c | |\n");
    EXPECT_EQ(headless_row("k", "v").markdown(), "| | |\n|---|---|\n| k | v |\n");
}

TEST(Table, MarkdownKeepsBold) {
    table t = two_columns();
    t.add_row({"**total**", "**3**"});
    EXPECT_EQ(t.markdown(), "| name | value |\n|---|---:|\n| **total** | **3** |\n");
}

TEST(Table, HtmlEscapesCellsAndAligns) {
    table t = two_columns();
    t.add_row({"<a & \"b\">", "1|2"});
    EXPECT_EQ(t.html(),
              "<table>\n"
              "<tr><th style=\"text-align:left\">name</th><th style=\"text-align:right\">value</th></tr>\n"
              "<tr><td>&lt;a &amp; &quot;b&quot;&gt;</td><td style=\"text-align:right\">1|2</td></tr>\n"
              "</table>\n");
}

TEST(Table, HtmlRendersWhollyBoldCellsAsB) {
    table t;
    t.add_column("x <y>");
    t.add_row({"**average <all>**"});
    t.add_row({"**a** and **b**"});  // not wholly bold: the text as it is
    t.add_row({"****"});
    const std::string html = t.html();
    EXPECT_NE(html.find("<th style=\"text-align:left\">x &lt;y&gt;</th>"), std::string::npos) << html;
    EXPECT_NE(html.find("<td><b>average &lt;all&gt;</b></td>"), std::string::npos) << html;
    EXPECT_NE(html.find("<td>**a** and **b**</td>"), std::string::npos) << html;
    EXPECT_NE(html.find("<td>****</td>"), std::string::npos) << html;
}

TEST(Table, HtmlLeavesOutAnEmptyHeaderRow) {
    EXPECT_EQ(headless_row("steps", "3").html(), "<table>\n<tr><td>steps</td><td>3</td></tr>\n</table>\n");
}

TEST(Table, RefusesMalformedTables) {
    table t = two_columns();
    EXPECT_THROW(t.add_row({"a", "1", "extra"}), trex::error);
    t.add_row({"a", "1"});
    EXPECT_THROW(t.add_column("late"), trex::error);
}
