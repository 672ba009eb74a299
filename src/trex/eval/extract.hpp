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

// prefer: "" or one of the kinds. Inside an unterminated <think>, only a complete (closed) block is taken.
artefact extract_artefact(const std::string& completion, const std::string& prefer = "");

// The T-Rex harness's extraction (`--protocol trex`; its or_benchmark_eval extract_python_code), point by point:
// the longest ```python block of the text after the last </think> (or </redacted_reasoning>), else of the whole
// completion; else the longest unlabelled ``` block, in the same order; else the text after </think> when there was
// one; else the whole completion. Whatever it finds is run as Python.
artefact extract_trex_protocol(const std::string& completion);

// ORLM's extraction (`--protocol orlm`; its eval/execute.py): the FIRST ```python block, up to the next ```; with no
// closing fence, up to the completion's second-to-last character (their slice [start:-1]); none without ```python
// or when the block is empty.
artefact extract_orlm_protocol(const std::string& completion);

// The kind a block's content looks like ("" when none): used for unlabelled blocks.
std::string sniff_kind(const std::string& text);

}  // namespace trex::eval
