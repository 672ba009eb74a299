// Prompt templates (editable files, prompts/*.txt) and few-shot retrieval.
//
// A template file has sections introduced by lines "=== name ===":
//   config   "artefact: python|lp|mps|mathprog" (what extraction prefers); lines starting with '#' are comments
//   system   the system message (optional)
//   user     the user message: {{question}}, {{data}} (the data section when the item has a data file, else
//            empty), {{data_json}} (the data file's contents), {{examples}} (the rendered few-shot examples)
//   data     what {{data}} becomes (may use {{data_json}})
//   example  one few-shot example: {{example_question}}, {{example_answer}}
// A template is named by a path, or by a name that resolves to <source>/prompts/<name>.txt (trex, lp, pulp,
// mathprog ship with the project).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "trex/eval/backend.hpp"
#include "trex/eval/benchmark.hpp"

namespace trex::eval {

struct prompt_template {
    std::string name, path;
    std::string system, user, data, example;
    std::string artefact;  // preferred artefact kind ("" = any)
};

// Loads a template by name or path; one-line errors name the file (unknown section, missing user section, ...).
prompt_template load_prompt(const std::string& name_or_path);
// The templates in <source>/prompts (names).
std::vector<std::string> list_prompts();

struct fewshot_example {
    std::string id, question, answer;
};

// A pool of solved examples: JSONL or a JSON list of records with "messages" (first user + first assistant
// message, e.g. `trex data build`'s sft.jsonl) or a question field (question / en_question / Question / problem)
// with an answer field (answer / solution / completion / en_answer / Answer).
class fewshot_pool {
   public:
    explicit fewshot_pool(const std::string& path);
    size_t size() const { return ex_.size(); }
    // The k most similar examples (TF-IDF cosine over words and word pairs), never the item itself: same id,
    // same normalised question text, or cosine ≥ 0.98.
    std::vector<const fewshot_example*> retrieve(const std::string& question, const std::string& id, int k) const;

   private:
    struct vec {
        std::vector<std::pair<uint64_t, double>> w;  // sorted by term
    };
    vec embed(const std::string& text) const;
    std::vector<fewshot_example> ex_;
    std::vector<vec> vecs_;
    std::vector<std::string> norm_;
    std::vector<std::pair<uint64_t, double>> idf_;  // sorted by term
};

// The chat messages for an item. data_json: contents of the item's data file ("" = none).
std::vector<chat_message> render_prompt(const prompt_template& t, const eval_item& item, const std::string& data_json,
                                        const std::vector<const fewshot_example*>& shots);

}  // namespace trex::eval
