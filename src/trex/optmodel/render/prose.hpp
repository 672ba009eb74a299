// The data of a DP question in prose: sentence plans for the generic (non-story) families.
//
// A question's data come in groups (render.cpp `groups`): a set, a scalar, one parameter over a set, several
// parameters over the same set, a parameter over two sets, or a 0/1 relation. Each group is said with a plan drawn
// from the question's random stream, so two questions of one family differ in how their data are given, not only in
// the numbers:
//   - one parameter over a set: "the cost is $3 for A, $5 for B" / "Cost ($): A 3, B 5" / sorted by value, largest
//     or smallest first, equal values said once ("A and C 3") / "A has a cost of $3, B $5";
//   - several parameters over a set: a legend stated once and one record per member ("A: 3, 7 and 12"), as a list or
//     inline; or one list per parameter (each in its own order); or a sentence per member (small sets);
//   - a parameter over two sets: each row (or each column) in value order, or rows in a stated column order (few
//     columns), or a sentence per row (few columns);
//   - from/to parameters that only repeat an arc's name ("Hudson->Oxford") are said once as the naming rule.
// Every plan writes every number of the group (tests check every family's DP text against its data.json), keeps
// a member's name next to its number wherever the order is not stated, and writes units once where it can.
#pragma once

#include <string>
#include <vector>

#include "trex/optmodel/families/family.hpp"

namespace trex::optmodel {

// A parameter's description and unit, expanded with the scenario's words.
struct doc_text {
    std::string desc, unit;
};
doc_text doc_words(const param_doc& p, const vocab& v, rng& r);

// A data value as written: strings as they are, numbers by format_value.
std::string value_text(const ojson& v);
// "$3", "40%", "12 crates", "7" (no unit).
std::string with_unit(const std::string& value, const std::string& unit);

// The members of each parameter of the group that have no value, said with the parameter's `absent` rule ("Beer C
// and Beer D have no sales limit."); "" when every member has a value.
std::string absent_sentences(const std::vector<const param_doc*>& group, const ojson& data, const vocab& v, rng& r);

// DP: the data of one group in sentences (see the top of this header). `v` holds the scenario's words and
// "<set>_label" for every set (its description).
std::string prose_data(const std::vector<const param_doc*>& group, const ojson& data, const vocab& v, rng& r);

// The family's own sentences (intro, requirements, goal) with stock phrases swapped for ones of the same meaning,
// drawn from r: "at most" / "no more than" / "not more than", "each" / "every" (before a noun), "may not" /
// "cannot", "the total" / "the overall" / "the combined", "needs" / "requires" ... A phrase is left as it is where
// the swap would change the grammar or the meaning ("at least as large as", "each can hold", "$3 each.").
std::string vary_wording(const std::string& text, rng& r);

}  // namespace trex::optmodel
