// The sizes of a `trex recipe` run: how much OR data, which model, how many steps of each training stage, how the
// held-out sets are evaluated. A profile is plain data; recipe.cpp turns it into stages (docs/recipe.md).
#pragma once

#include <string>
#include <vector>

namespace trex::recipe {

// One training stage's schedule (trex train's [data] and [optim] keys).
struct train_sizes {
    int steps = 0;
    int batch = 8;
    int seq = 256;
    double lr = 0;
    int warmup = 0;
};

struct profile {
    std::string name;
    std::string summary;  // one line for --help and the report

    // Model: a DeepSeek-V4 config.json ("embedded:v4-tiny" or a path under the source tree), the vocabulary the
    // recipe's tokenizer is trained to (the model's vocab_size is set to it).
    std::string model = "embedded:v4-tiny";
    int vocab_size = 4096;
    int max_position = 1024;  // the config's max_position_embeddings: prompt + answer of an SFT sample fit
                              // (the SFT seq: a longer sample is truncated and its answer's end never trained)
    int sliding_window = 0;   // the config's sliding_window where set (0: the config's own)

    // OR data (trex data build): SFT samples and held-out instances of the training families; a second build of
    // held-out test items of families the model never trains on (transfer).
    long sft_count = 0;
    long test_count = 0;
    long transfer_count = 0;
    long cpt_documents = 0;
    int difficulty_hi = 1;
    std::vector<std::string> families;  // the SFT set's families (empty: every family but the transfer ones)
    std::vector<std::string> transfer_families;
    // Task categories of the SFT set with their weights (formulation, formulation_code, code, lp_file).
    std::vector<std::pair<std::string, double>> categories;
    // The SFT answers' shape (trex data build's sft.answer): "reasoned" (<think> first, as the paper's SFT data) or
    // "direct" (the artefact alone).
    std::string sft_answer = "reasoned";

    // General text (the base model's corpus): at most this many bytes from the Debian documentation sources.
    long general_bytes = 0;
    double heldout_share = 0.05;  // documents kept out of training for the perplexity check

    train_sizes base, cpt, sft;
    double cpt_replay = 0.2;  // share of general text in the CPT mixture

    // Evaluation: prompt forms (eval templates written by the recipe: "lp", "pulp"), tokens per answer, items per
    // set (0 = all), samples decoded together.
    std::vector<std::string> eval_forms = {"lp"};
    int max_tokens = 768;
    int eval_limit = 0;
    int local_batch = 8;
};

// The profiles by name: demo, quick, full, and smoke (the reduced end-to-end run of the tests).
const profile& profile_named(const std::string& name);
std::vector<std::string> profile_names();

}  // namespace trex::recipe
