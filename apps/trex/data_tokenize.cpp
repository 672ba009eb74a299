// trex data tokenize: documents (text / Markdown / JSONL) and chat `messages` JSONL into packed token shards with
// document boundaries and the SFT loss mask (src/trex/data/tokenize.hpp, docs/training.md "Data").
//
//   trex data tokenize --input PATH... --out DIR [--tokenizer F] [--format auto|text|jsonl|messages]
//                      [--text-key K] [--shard-tokens N] [--no-bos] [--no-eos] [--thinking] [--keep-thinking]
//                      [--train-on all|last] [--vocab N] [--force] [--json]
#include <cstdio>
#include <memory>

#include "commands.hpp"
#include "trex/base/error.hpp"
#include "trex/data/tokenize.hpp"

namespace trex::cli {

void register_data_tokenize(CLI::App* data) {
    auto o = std::make_shared<tokenize_options>();
    auto no_bos = std::make_shared<bool>(false), no_eos = std::make_shared<bool>(false);
    auto keep_thinking = std::make_shared<bool>(false), json = std::make_shared<bool>(false);
    auto train_on = std::make_shared<std::string>("all");
    CLI::App* c = data->add_subcommand("tokenize", "documents and chat messages into token shards (ids, boundaries, "
                                                   "SFT loss mask)");
    c->add_option("--input", o->inputs, "files or directories (.txt .md .markdown .jsonl)")->required();
    c->add_option("--out", o->out_dir, "output directory (shard-*.tshard + manifest.json)")->required();
    c->add_option("--tokenizer", o->tokenizer, "tokenizer.json (default: data/deepseek-v4/tokenizer.json)");
    c->add_option("--format", o->format, "auto | text | jsonl | messages (default auto: by extension and content)");
    c->add_option("--text-key", o->text_key, "the document field of JSONL records (default text)");
    c->add_option("--shard-tokens", o->shard_tokens, "tokens per shard file (default 16Mi)");
    c->add_option("--vocab", o->max_vocab, "fail unless the tokenizer's ids fit a model vocabulary of this size");
    c->add_flag("--no-bos", *no_bos, "text documents: no BOS token in front");
    c->add_flag("--no-eos", *no_eos, "text documents: no EOS token at the end");
    c->add_flag("--thinking", o->chat.thinking, "chat: thinking mode (reasoning_content inside <think>)");
    c->add_flag("--keep-thinking", *keep_thinking, "chat: keep the reasoning of earlier assistant turns");
    c->add_option("--train-on", *train_on, "chat: train on all assistant messages or only the last (all|last)");
    c->add_flag("--force", o->force, "replace an existing output directory");
    c->add_flag("--json", *json, "print the summary as JSON");
    c->callback([=] {
        TREX_CHECK(*train_on == "all" || *train_on == "last", "--train-on: 'all' or 'last', got '{}'", *train_on);
        tokenize_options opt = *o;
        opt.add_bos = !*no_bos;
        opt.add_eos = !*no_eos;
        opt.chat.drop_thinking = !*keep_thinking;
        opt.chat.train_last_only = *train_on == "last";
        opt.show_progress = !*json;
        const tokenize_summary s = tokenize_to_shards(opt);
        if (*json) {
            std::printf("%s\n", s.to_json().dump(2).c_str());
            return;
        }
        std::printf("trex data tokenize: %s\n", opt.out_dir.c_str());
        std::printf("  %ld files, %ld documents (%ld empty skipped), %.2f MB\n", (long)s.files, (long)s.documents,
                    (long)s.skipped_empty, s.bytes / 1e6);
        std::printf("  %ld tokens, %ld trained on (%.1f%%), %zu shard(s), vocabulary %u\n", (long)s.tokens,
                    (long)s.target_tokens, s.tokens ? 100.0 * s.target_tokens / s.tokens : 0.0, s.shards.size(),
                    s.vocab_size);
        std::printf("  %.2f s, %.2f MB/s\n", s.seconds, s.seconds > 0 ? s.bytes / 1e6 / s.seconds : 0.0);
    });
}

}  // namespace trex::cli
