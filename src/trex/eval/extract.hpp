// Answer extraction: the final model artefact of a completion. Reasoning inside <think>…</think> is ignored (a
// completion that only closes </think> has everything before it dropped). Candidates, in order of appearance:
// fenced blocks (```python, ```lp, ```mps, ```mathprog / ```gmpl / ```ampl, or an unlabelled block whose content is
// recognised) and T-Rex protocol tags (<python>…</python>, <lp>…</lp>; a fence inside a tag is unwrapped). The last
// candidate of the preferred kind wins, else the last candidate of any kind; with no candidate, a whole completion
// that is recognisably code is taken.
#pragma once

#include <string>

namespace trex::eval {

struct artefact {
    std::string kind;  // "python", "lp", "mps", "mathprog", or "" when none
    std::string text;
};

// prefer: "" or one of the kinds.
artefact extract_artefact(const std::string& completion, const std::string& prefer = "");

// The kind a block's content looks like ("" when none): used for unlabelled blocks.
std::string sniff_kind(const std::string& text);

}  // namespace trex::eval
