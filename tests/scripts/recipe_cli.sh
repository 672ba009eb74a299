#!/usr/bin/env bash
# trex recipe end to end on the reduced `smoke` profile: every stage (two data builds, corpus, tokenizer, base, CPT,
# SFT-only, CPT+SFT, evaluation of three models, perplexity, report) and summary.json's keys; a rerun skips every
# stage; a run killed between stages and one killed inside a training stage, each rerun with --resume, end with the
# same checkpoints, completions and Pass@1 values as the uninterrupted run; an edited stage output makes that stage
# run again; bad input (unknown profile, a --bench file that does not exist) is a one-line error.
# Usage: recipe_cli.sh TREX SOURCE_DIR WORKDIR
set -euo pipefail
trex="$1"; src="$2"; work="$3"
rm -rf "$work"; mkdir -p "$work"
export OMP_NUM_THREADS=2
fail() { echo "FAIL: $*"; exit 1; }
if ! ls -d /usr/share/doc/python3.*/html/_sources > /dev/null 2>&1; then
  echo "SKIP: no python3-doc (scripts/setup.sh installs it): the recipe has no general-text corpus"; exit 77
fi

# 1. the whole recipe, with a real-benchmark-format file (NL4OPT's en_question/en_answer records) scored too
bench=(--bench "nl4opt=$src/tests/fixtures/eval/nl4opt.jsonl")
"$trex" recipe --profile smoke --out "$work/a" "${bench[@]}" > "$work/a.out" 2> "$work/a.err" || { cat "$work/a.err"; fail "recipe"; }
grep -q "average Pass@1 on the held-out synthetic sets" "$work/a.out" || fail "no Pass@1 line"
python3 - "$work/a" <<'PY'
import json, os, sys
d = sys.argv[1]
s = json.load(open(os.path.join(d, "summary.json")))
for m in ("base", "sft_only", "cpt_sft"):
    v = s["pass_at_1_avg"][m]
    assert isinstance(v, float) and 0.0 <= v <= 1.0, (m, v)
sets = ["heldout-dp", "heldout-dt", "heldout-dps", "transfer-dp", "transfer-dt", "transfer-dps"]
assert sorted(s["sets"]) == sorted(sets), s["sets"].keys()
for m in ("base", "sft_only", "cpt_sft"):
    assert 0.0 <= s["real_benchmarks"]["nl4opt"]["lp"][m] <= 1.0, s["real_benchmarks"]
# the corpus was decontaminated against every evaluated set, the real one included
man = json.load(open(os.path.join(d, "corpus", "manifest.json")))
assert any(a.endswith("nl4opt.jsonl") for a in man["decontamination"]["against"]), man
for r in ("base", "cpt", "sft_only", "cpt_sft"):
    assert s["perplexity"][r] > 1.0, (r, s["perplexity"])
    assert s["training"][r]["steps"] > 0 and s["training"][r]["tokens_per_s"] > 0, s["training"][r]
stages = ["data", "transfer-data", "corpus", "tokenizer", "base", "cpt", "sft-only", "cpt-sft",
          "eval-base-lp", "eval-sft-only-lp", "eval-cpt-sft-lp", "perplexity"]
assert list(s["stages"]) == stages, list(s["stages"])
assert all(not v["skipped"] for v in s["stages"].values())
# every evaluated item was executed and judged (a pass needs a solve: the eval results say how each one ended)
for m in ("base", "sft-only", "cpt-sft"):
    rows = [json.loads(l) for l in open(os.path.join(d, "eval", m + "-lp", "results.jsonl"))]
    assert len(rows) >= 6 and all("outcome" in r for r in rows), m
    assert all(r["outcome"] == "correct" for r in rows if r["correct"]), m
# the held-out sets are not in the training data: no SFT problem statement (the question without its last paragraph,
# the task instruction) equals a test one
def body(q):
    return q.strip().rsplit("\n\n", 1)[0]
sft = {body(json.loads(l)["messages"][0]["content"]) for l in open(os.path.join(d, "data/or/sft.jsonl"))}
for rep in ("dp", "dt", "dps"):
    for l in open(os.path.join(d, "data/or/test", rep + ".jsonl")):
        assert body(json.loads(l)["en_question"]) not in sft
# the transfer families are not in the SFT set
fams = {json.loads(l)["meta"]["family"] for l in open(os.path.join(d, "data/or/sft.jsonl"))}
assert not fams & {"knapsack_bounded", "transshipment", "facility_capacitated"}, fams
for f in ("report.md", "report.html", "charts/loss-sft.svg", "tokenizer/tokenizer.json", "corpus/heldout.txt"):
    assert os.path.getsize(os.path.join(d, f)) > 0, f
PY

# 2. a rerun skips every stage and gives the same summary values
"$trex" recipe --profile smoke --out "$work/a" "${bench[@]}" > "$work/a2.out" 2> "$work/a2.err" || { cat "$work/a2.err"; fail "rerun"; }
[ "$(grep -c 'skipped' "$work/a2.err")" -eq 12 ] || { cat "$work/a2.err"; fail "a rerun did not skip every stage"; }

# 3. an edited output: that stage runs again, the stages before it do not
echo "edited" >> "$work/a/perplexity/base.json"
"$trex" recipe --profile smoke --out "$work/a" "${bench[@]}" > /dev/null 2> "$work/a3.err" || { cat "$work/a3.err"; fail "rerun after edit"; }
grep -q '^\[12/12\] perplexity$' "$work/a3.err" || { cat "$work/a3.err"; fail "the edited stage did not run again"; }
[ "$(grep -c 'skipped' "$work/a3.err")" -eq 11 ] || { cat "$work/a3.err"; fail "more than the edited stage ran"; }

# 4. killed inside a training stage (the SFT run has written a checkpoint), then killed between stages; each rerun
#    with --resume; the result equals the uninterrupted run's
run_until() {  # run_until DIR FILE-GLOB: start the recipe, kill its process group once FILE-GLOB exists
  local dir="$1" glob="$2"
  setsid "$trex" recipe --profile smoke --out "$dir" --resume "${bench[@]}" > /dev/null 2> "$dir.err" &
  local pid=$! waited=0
  until compgen -G "$dir/$glob" > /dev/null; do
    sleep 0.2; waited=$((waited + 1))
    kill -0 "$pid" 2> /dev/null || { cat "$dir.err"; fail "the recipe ended before $glob appeared"; }
    [ "$waited" -lt 3000 ] || fail "timeout waiting for $glob"
  done
  kill -KILL -- "-$pid" 2> /dev/null || true
  wait "$pid" 2> /dev/null || true
}
mkdir -p "$work/b"
run_until "$work/b" "runs/sft-only/checkpoints/step-*/manifest.json"
[ ! -f "$work/b/state/sft-only.json" ] || fail "the kill came after sft-only finished"
run_until "$work/b" "state/cpt-sft.json"
"$trex" recipe --profile smoke --out "$work/b" --resume "${bench[@]}" > /dev/null 2> "$work/b3.err" ||
  { cat "$work/b3.err"; fail "resume"; }
grep -q 'cpt-sft: done before' "$work/b3.err" || { cat "$work/b3.err"; fail "a finished stage ran again"; }
python3 - "$work/a" "$work/b" <<'PY'
import hashlib, json, os, sys
a, b = sys.argv[1:]
def h(p):
    return hashlib.sha256(open(p, "rb").read()).hexdigest()
def ckpt(d, run):
    c = os.path.join(d, "runs", run, "checkpoints")
    (step,) = os.listdir(c)
    return os.path.join(c, step, "model.safetensors")
for run in ("base", "cpt", "sft-only", "cpt-sft"):
    assert h(ckpt(a, run)) == h(ckpt(b, run)), run
for m in ("base", "sft-only", "cpt-sft"):
    def completions(d):  # (the cache key hashes the checkpoint's path, which differs between a and b)
        rows = [json.loads(l) for l in open(os.path.join(d, "eval", m + "-lp", "completions.jsonl"))]
        return sorted((r["id"], r["sample"], r["completion"], r["finish_reason"]) for r in rows)
    assert completions(a) == completions(b), m
sa, sb = (json.load(open(os.path.join(d, "summary.json"))) for d in (a, b))
assert sa["pass_at_1_avg"] == sb["pass_at_1_avg"] and sa["sets"] == sb["sets"] and sa["perplexity"] == sb["perplexity"]
PY

# 5. bad input
if "$trex" recipe --profile huge --out "$work/c" > /dev/null 2> "$work/c.err"; then fail "unknown profile accepted"; fi
grep -q "unknown recipe profile 'huge'" "$work/c.err" || { cat "$work/c.err"; fail "unknown profile message"; }
if "$trex" recipe --profile smoke --out "$work/c" --bench nl4opt=/nonexistent.jsonl > /dev/null 2> "$work/c.err"; then
  fail "missing --bench file accepted"
fi
grep -q "nonexistent.jsonl: no such file" "$work/c.err" || { cat "$work/c.err"; fail "missing bench message"; }
echo "recipe_cli: OK"
