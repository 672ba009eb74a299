#!/usr/bin/env bash
# trex generate from the command line, on checkpoints nobody wrote by hand: a v4-tiny model written in the HF release
# layout by `trex convert --init`, and a `trex train` run directory. Checks: greedy tokens are the argmax of the full
# forward at every position (`trex score --per-token` over prompt + output: an independent path through the
# training forward), also with the release's numerics (--qat release, scored with --qat release); --speculative mtp
# gives the same greedy tokens; a JSONL batch decoded together equals each request alone; seeded sampling repeats and another
# seed differs; text prompts through a DeepSeek-V4-format tokenizer stream and stop; bad input (missing or
# truncated checkpoint, a tokenizer wider than the model, an id outside the vocabulary, a malformed JSONL line, text
# without a tokenizer) is a one-line error with a non-zero exit.
# Usage: generate_cli.sh TREX SOURCE_DIR WORKDIR
set -euo pipefail
trex="$1"; src="$2"; work="$3"
rm -rf "$work"; mkdir -p "$work"
export OMP_NUM_THREADS=2
fail() { echo "FAIL: $*"; exit 1; }

"$trex" convert --init "$src/configs/v4-tiny.json" --to "$work/hf" --seed 5 --init-std 0.05 > "$work/convert.log" 2>&1 ||
  { cat "$work/convert.log"; fail "convert --init"; }
prompt="0 17 4 99 3 250 8 8 1000 2 77 31 5"
"$trex" generate --checkpoint "$work/hf" --prompt-ids "$prompt" --max-tokens 40 --json > "$work/greedy.json" 2> "$work/greedy.err"
python3 - "$work/greedy.json" "$work/seq.txt" "$prompt" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
prompt = [int(x) for x in sys.argv[3].split()]
assert d["finish_reason"] == "length" and d["completion_tokens"] == 40 == len(d["tokens"]), d
assert d["prompt_tokens"] == len(prompt) and d["decode_tokens_per_s"] > 0
open(sys.argv[2], "w").write(" ".join(map(str, prompt + d["tokens"])) + "\n")
PY
"$trex" score --checkpoint "$work/hf" --tokens "$work/seq.txt" --per-token --json > "$work/score.json"
python3 - "$work/greedy.json" "$work/score.json" 13 <<'PY'
import json, sys
g, s, n = json.load(open(sys.argv[1])), json.load(open(sys.argv[2])), int(sys.argv[3])
pred = s["sequences"][0]["predicted"]  # argmax of the full forward after each position
assert pred[n - 1:] == g["tokens"][:len(pred) - n + 1], (pred[n - 1:], g["tokens"])
PY

# the release's numerics (--qat release): cached decoding fake-quantises as the full forward does, so the greedy
# tokens are still the argmax of `trex score --qat release` after each position
"$trex" generate --checkpoint "$work/hf" --prompt-ids "$prompt" --max-tokens 40 --qat release --json \
  > "$work/qat.json" 2> "$work/qat.err"
python3 -c "
import json,sys
d, p = json.load(open(sys.argv[1])), sys.argv[3].split()
open(sys.argv[2], 'w').write(' '.join(p + [str(t) for t in d['tokens']]) + '\n')" "$work/qat.json" "$work/qat_seq.txt" "$prompt"
"$trex" score --checkpoint "$work/hf" --tokens "$work/qat_seq.txt" --per-token --json --qat release > "$work/qat_score.json"
python3 - "$work/qat.json" "$work/qat_score.json" 13 <<'PY'
import json, sys
g, s, n = json.load(open(sys.argv[1])), json.load(open(sys.argv[2])), int(sys.argv[3])
pred = s["sequences"][0]["predicted"]
assert pred[n - 1:] == g["tokens"][:len(pred) - n + 1], (pred[n - 1:], g["tokens"])
PY

# MTP speculative decoding: the same greedy tokens
"$trex" generate --checkpoint "$work/hf" --prompt-ids "$prompt" --max-tokens 40 --speculative mtp --json \
  > "$work/spec.json" 2> "$work/spec.err"
python3 -c "
import json,sys
a, b = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
assert a['tokens'] == b['tokens'], (a['tokens'], b['tokens'])
assert 0 <= b['mtp_acceptance'] <= 1" "$work/greedy.json" "$work/spec.json"
grep -q "MTP drafts accepted" "$work/spec.err" || fail "no acceptance line"

# seeded sampling repeats; another seed differs
for seed in 1 2; do
  "$trex" generate --checkpoint "$work/hf" --prompt-ids "$prompt" --max-tokens 12 --temperature 0.9 --top-k 50 \
    --seed $seed --json > "$work/sample$seed.json" 2>/dev/null
done
"$trex" generate --checkpoint "$work/hf" --prompt-ids "$prompt" --max-tokens 12 --temperature 0.9 --top-k 50 \
  --seed 1 --json > "$work/sample1b.json" 2>/dev/null
python3 - "$work" <<'PY'
import json, sys
w = sys.argv[1]
a, b, c = (json.load(open(f"{w}/{n}.json"))["tokens"] for n in ("sample1", "sample1b", "sample2"))
assert a == b, (a, b)
assert a != c, (a, c)
PY

# text through a DeepSeek-V4-format tokenizer (its chat special tokens): chat batch and streaming
tok="$src/tests/golden/tokenizer/trained_v1000.json"
cat > "$work/messages.jsonl" <<'J'
{"id": "q1", "messages": [{"role": "user", "content": "Maximize 3x + 2y subject to x + y <= 4."}]}
{"id": "q2", "messages": [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Minimize cost."}]}
{"prompt": "A factory makes two products"}
{"id": 7, "messages": [{"role": "user", "content": "Schedule three jobs on two machines."}]}
J
"$trex" generate --checkpoint "$work/hf" --tokenizer "$tok" --messages "$work/messages.jsonl" --max-tokens 16 \
  --batch 4 --logprobs 2 --output "$work/out4.jsonl" 2> "$work/out4.err"
"$trex" generate --checkpoint "$work/hf" --tokenizer "$tok" --messages "$work/messages.jsonl" --max-tokens 16 \
  --batch 1 --logprobs 2 --output "$work/out1.jsonl" 2> /dev/null
python3 - "$work/out4.jsonl" "$work/out1.jsonl" <<'PY'
import json, sys
a = [json.loads(l) for l in open(sys.argv[1])]
b = [json.loads(l) for l in open(sys.argv[2])]
assert [x["id"] for x in a] == ["q1", "q2", "2", "7"], [x["id"] for x in a]
for x, y in zip(a, b):
    assert x["tokens"] == y["tokens"], (x["id"], x["tokens"], y["tokens"])
    assert x["completion_tokens"] == len(x["tokens"]) and x["finish_reason"] in ("stop", "length")
    assert len(x["logprobs"]) == len(x["tokens"]) and all(len(t["top"]) == 2 for t in x["logprobs"])
    assert all(t["logprob"] <= 0 for t in x["logprobs"])
    assert x["completion"] == y["completion"]
PY
# a stop string cuts the text; streaming prints the text
"$trex" generate --checkpoint "$work/hf" --tokenizer "$tok" --prompt "Maximize profit." --max-tokens 8 \
  > "$work/stream.txt" 2> "$work/stream.err" || fail "streaming"
grep -q "new tokens" "$work/stream.err" || fail "no statistics line"

# a training run directory generates (its newest checkpoint)
"$trex" train --set "model.config=\"$src/configs/v4-micro.json\"" --set data.batch=2 --set data.seq=32 \
  --set checkpoint.every=2 --set log.report=false --steps 2 --out "$work/run" > "$work/train.log" 2>&1 ||
  { tail -5 "$work/train.log"; fail "train"; }
"$trex" generate --checkpoint "$work/run" --prompt-ids "1 2 3 4" --max-tokens 5 --json > "$work/run.json" 2>/dev/null
python3 -c "
import json,sys
d = json.load(open(sys.argv[1])); assert len(d['tokens']) <= 5 and 'step-' in d['checkpoint'], d" "$work/run.json"

# bad input: one line on stderr, non-zero exit, nothing on stdout
expect_error() {  # expect_error PATTERN CMD...
  local pattern="$1"; shift
  if "$@" > "$work/err.out" 2> "$work/err.txt"; then fail "accepted: $*"; fi
  grep -q "$pattern" "$work/err.txt" || { cat "$work/err.txt"; fail "no '$pattern' in the error of: $*"; }
  [ "$(grep -c . "$work/err.txt")" -le 2 ] || { cat "$work/err.txt"; fail "more than a one-line error: $*"; }
}
expect_error "outside the vocabulary" "$trex" generate --checkpoint "$work/hf" --prompt-ids "1 2 4096"
expect_error "tokenizer" "$trex" generate --checkpoint "$work/hf" --prompt "hello"
expect_error "ids up to" "$trex" generate --checkpoint "$work/run" --tokenizer "$tok" --prompt "hello"
printf '{"id": "a", "messages": [{"role": "user", "content": "x"}]}\n{"id": "b", "messages": [\n' > "$work/bad.jsonl"
expect_error "bad.jsonl:2" "$trex" generate --checkpoint "$work/hf" --tokenizer "$tok" --messages "$work/bad.jsonl"
expect_error "checkpoint" "$trex" generate --checkpoint "$work/none" --prompt-ids "1 2"
cp -r "$work/hf" "$work/truncated"
f="$work/truncated/model-00001-of-00001.safetensors"
head -c $(( $(stat -c %s "$f") / 2 )) "$f" > "$f.tmp" && mv "$f.tmp" "$f"
expect_error "safetensors" "$trex" generate --checkpoint "$work/truncated" --prompt-ids "1 2"
echo "generate_cli: OK"
