// The explicit LaTeX form of a model (write_latex in writers.hpp) and its reader. The reader accepts exactly the
// writer's layout and exists so a formulation-only answer can be re-executed: parse the <model> block back into
// the IR and solve it.
//
// Layout (every line but the last ends with a LaTeX line break, omitted here):
//   \begin{align*}
//   \min\quad & 3\,x_{1} + 2\,x_{2} + 10
//   \text{s.t.}\quad & x_{1} + x_{2} \le 10 && \text{(cap\_1)}
//   & x_{1} - x_{2} \ge -4 && \text{(bal\_1)}
//   & x_{1}, x_{2} \ge 0
//   & 0 \le y_{1} \le 5
//   & y_{1} \in \mathbb{Z}
//   & z_{1}, z_{2} \in \{0, 1\}
//   \end{align*}
#pragma once

#include <string>

#include "trex/optmodel/ir/model.hpp"

namespace trex::optmodel {

// "x_1_2" -> "x_{1,2}", "open_3" -> "\mathit{open}_{3}", "foo_bar" -> "\mathit{foo\_bar}".
std::string latex_var(const std::string& name);

// Parses the first align* block of `text` written by write_latex. Throws trex::error (one line naming `what` and
// the offending line) on anything else.
model parse_latex(const std::string& text, const std::string& what);

}  // namespace trex::optmodel
