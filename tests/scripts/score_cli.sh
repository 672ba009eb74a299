#!/usr/bin/env bash
# trex score from the command line, on checkpoints nobody wrote by hand: a v4-tiny model written in the HF release
# layout by `trex convert --init`, and a `trex train` run directory. Checks: the JSON's totals agree with its
# per-sequence figures and the per-token log-probabilities; the run directory and its newest checkpoint score the
# same; --text through a trained tokenizer equals --tokens of the same ids; the logits dump has the sequences'
# shapes; --qat release scores differently (and is a one-line error where the shapes do not fit); a token id outside
# the vocabulary and a missing checkpoint are one-line errors with a non-zero exit.
# Usage: score_cli.sh TREX SOURCE_DIR WORKDIR
set -euo pipefail
trex="$1"; src="$2"; work="$3"
rm -rf "$work"; mkdir -p "$work"
export OMP_NUM_THREADS=2
fail() { echo "FAIL: $*"; exit 1; }

"$trex" convert --init "$src/configs/v4-tiny.json" --to "$work/hf" --seed 5 > "$work/convert.log" 2>&1 ||
  { cat "$work/convert.log"; fail "convert --init"; }
printf '0 17 4 99 3 250 8 8 1000 2\n[5, 6, 7, 8, 9, 10, 11, 12, 13]\n' > "$work/tokens.txt"
"$trex" score --checkpoint "$work/hf" --tokens "$work/tokens.txt" --chunk 4 --per-token --json \
  --dump-logits "$work/logits.safetensors" > "$work/hf.json"
python3 - "$work/hf.json" "$work/logits.safetensors" <<'PY'
import json, math, struct, sys
d = json.load(open(sys.argv[1]))
assert d["tokens"] == 9 + 8, d["tokens"]
seq_nll = sum(s["mean_nll"] * s["tokens"] for s in d["sequences"])
assert abs(seq_nll / d["tokens"] - d["mean_nll"]) < 1e-9 * d["mean_nll"]
lp = [x for s in d["sequences"] for x in s["logprobs"]]
assert abs(-sum(lp) / len(lp) - d["mean_nll"]) < 1e-9 * d["mean_nll"] and all(x <= 0 for x in lp)
assert abs(math.exp(d["mean_nll"]) - d["perplexity"]) < 1e-9 * d["perplexity"]
assert d["sequences"][0]["chunks"] == 3 and d["sequences"][0]["predicted"][:3] == [17, 4, 99]
# an untrained model is close to uniform over the 4096-token vocabulary
assert 0.5 * math.log(4096) < d["mean_nll"] < 2 * math.log(4096), d["mean_nll"]
raw = open(sys.argv[2], "rb").read()
n = struct.unpack("<Q", raw[:8])[0]
header = json.loads(raw[8:8 + n])
assert header["logits.0.0"]["shape"] == [4, 4096] and header["logits.0.2"]["shape"] == [2, 4096], header.keys()
assert header["input_ids.1.1"]["shape"] == [4], header["input_ids.1.1"]
PY

# a training run: the run directory scores as its newest checkpoint
"$trex" train --set "model.config=\"$src/configs/v4-micro.json\"" --set data.batch=2 --set data.seq=32 \
  --set checkpoint.every=2 --set log.report=false --steps 2 --out "$work/run" > "$work/train.log" 2>&1 ||
  { tail -5 "$work/train.log"; fail "train"; }
printf '1 2 3 4 5 6 7 8 9 10 11 12\n' > "$work/micro_tokens.txt"
"$trex" score --checkpoint "$work/run" --tokens "$work/micro_tokens.txt" --json > "$work/run.json"
ckpt=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['checkpoint'])" "$work/run.json")
"$trex" score --checkpoint "$ckpt" --tokens "$work/micro_tokens.txt" --json > "$work/ckpt.json"
python3 -c "
import json,sys
a, b = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
assert a['mean_nll'] == b['mean_nll'] and a['tokens'] == 11, (a, b)" "$work/run.json" "$work/ckpt.json"

# text through a tokenizer = the same ids as tokens (BOS first)
tok="$src/tests/golden/tokenizer/trained_v1000.json"
printf 'maximize 3x + 2y subject to x + y <= 4' > "$work/doc.txt"
"$trex" score --checkpoint "$work/hf" --text "$work/doc.txt" --tokenizer "$tok" --per-token --json > "$work/text.json"
python3 - "$work/text.json" "$work/text_tokens.txt" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
ids = [0] + d["sequences"][0]["predicted"]  # the config's BOS id is 0
open(sys.argv[2], "w").write(" ".join(map(str, ids)) + "\n")
assert len(ids) > 5
PY
"$trex" score --checkpoint "$work/hf" --tokens "$work/text_tokens.txt" --json > "$work/text_as_tokens.json"
python3 -c "
import json,sys
a, b = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
assert a['mean_nll'] == b['mean_nll'], (a['mean_nll'], b['mean_nll'])" "$work/text.json" "$work/text_as_tokens.json"

# the release's numerics on request (docs/model.md 3.4): the export of a plain-fp32 model keeps "qat": "none", so the
# default is unchanged; --qat release changes the scores; on v4-micro (16 non-RoPE dims) it is a one-line error
python3 -c "import json,sys; c=json.load(open(sys.argv[1])); assert c.get('qat', 'none') == 'none', c.get('qat')" "$work/hf/config.json"
"$trex" score --checkpoint "$work/hf" --tokens "$work/tokens.txt" --json --qat release --indexer-ties torch > "$work/qat.json"
python3 -c "
import json,sys
a, b = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
assert a['tokens'] == b['tokens'] and a['mean_nll'] != b['mean_nll'], (a['mean_nll'], b['mean_nll'])" "$work/hf.json" "$work/qat.json"
status=0; "$trex" score --checkpoint "$work/run" --tokens "$work/micro_tokens.txt" --qat release > "$work/qat_bad.log" 2>&1 || status=$?
[ "$status" -ne 0 ] && grep -q "key 'qat': 'release' quantises head_dim" "$work/qat_bad.log" || { cat "$work/qat_bad.log"; fail "qat on micro"; }
[ "$(wc -l < "$work/qat_bad.log")" -eq 1 ] || { cat "$work/qat_bad.log"; fail "qat error not one line"; }

# bad inputs: one line, non-zero exit
printf '1 2 4096\n' > "$work/bad.txt"
status=0; "$trex" score --checkpoint "$work/hf" --tokens "$work/bad.txt" > "$work/bad.log" 2>&1 || status=$?
[ "$status" -ne 0 ] || fail "an id outside the vocabulary exited 0"
grep -q "sequence 0, token 2: id 4096 is outside the vocabulary" "$work/bad.log" || { cat "$work/bad.log"; fail "bad id message"; }
[ "$(wc -l < "$work/bad.log")" -eq 1 ] || { cat "$work/bad.log"; fail "not one line"; }
status=0; "$trex" score --checkpoint "$work/absent" --tokens "$work/tokens.txt" > "$work/absent.log" 2>&1 || status=$?
[ "$status" -ne 0 ] && grep -q "not a directory" "$work/absent.log" || { cat "$work/absent.log"; fail "absent checkpoint"; }
echo "score_cli: ok"
