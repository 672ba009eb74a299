#!/usr/bin/env bash
# trex serve driven by the official openai Python package (tests/scripts/serve_client.py), trex eval run against it,
# admission by cache memory (429 + Retry-After), and graceful shutdown (SIGTERM during a request: it finishes, exit 0).
# The model: a v4-tiny written in the HF release layout by `trex convert --init`, with a DeepSeek-V4-format tokenizer
# as DIR/tokenizer.json (the default path). Skipped (exit 77) when the venv has no openai package.
# Usage: serve_openai.sh TREX SOURCE_DIR WORKDIR
set -euo pipefail
trex="$1"; src="$2"; work="$3"
py="$src/.venv/bin/python"
"$py" -c "import openai" 2>/dev/null || { echo "no openai package in .venv (scripts/setup.sh installs it)"; exit 77; }
rm -rf "$work"; mkdir -p "$work"
export OMP_NUM_THREADS=2
fail() { echo "FAIL: $*"; [ -f "$work/serve.err" ] && tail -5 "$work/serve.err"; exit 1; }
pids=()
cleanup() { for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null || true; done; }
trap cleanup EXIT

"$trex" convert --init "$src/configs/v4-tiny.json" --to "$work/model" --seed 3 --init-std 0.05 > /dev/null
cp "$src/tests/golden/tokenizer/trained_v1000.json" "$work/model/tokenizer.json"

# start_server OUT ERR ARGS...: runs trex serve on a free port; sets $port and $server
start_server() {
  local out="$1" err="$2"; shift 2
  "$trex" serve --checkpoint "$work/model" --port 0 "$@" > "$out" 2> "$err" &
  server=$!
  pids+=("$server")
  for _ in $(seq 100); do
    port=$(sed -n 's/^serve: listening on http:\/\/[0-9.]*:\([0-9]*\).*/\1/p' "$out")
    [ -n "$port" ] && return 0
    kill -0 "$server" 2>/dev/null || fail "the server exited"
    sleep 0.1
  done
  fail "the server did not start"
}

export TREX_TEST_KEY="k-$RANDOM$RANDOM"
start_server "$work/serve.out" "$work/serve.err" --api-key-env TREX_TEST_KEY --max-batch 8
"$py" "$src/tests/scripts/serve_client.py" "http://127.0.0.1:$port" "$TREX_TEST_KEY" || fail "openai client checks"

# trex eval against the server, end to end (the answers of a random model are wrong; none may be a backend error)
"$trex" eval run --bench "$src/tests/fixtures/eval/nl4opt.jsonl" --out "$work/eval" --backend openai \
  --url "http://127.0.0.1:$port" --model trex --api-key-env TREX_TEST_KEY --max-tokens 24 --limit 4 \
  --concurrency 4 > "$work/eval.log" 2>&1 || { tail -5 "$work/eval.log"; fail "trex eval run against trex serve"; }
python3 - "$work/eval" <<'PY'
import json, os, sys
rows = [json.loads(l) for l in open(os.path.join(sys.argv[1], "completions.jsonl"))]
assert len(rows) == 4, len(rows)
assert all(isinstance(r.get("completion"), str) for r in rows), rows[0]
PY

# SIGTERM while a request runs: it finishes, new ones are refused, exit 0
python3 - "http://127.0.0.1:$port" "$TREX_TEST_KEY" > "$work/inflight.json" <<'PY' &
import json, sys, urllib.request
req = urllib.request.Request(sys.argv[1] + "/v1/completions",
                             data=json.dumps({"prompt": "x", "max_tokens": 400, "temperature": 0.5}).encode(),
                             headers={"Authorization": "Bearer " + sys.argv[2], "Content-Type": "application/json"})
print(urllib.request.urlopen(req, timeout=120).read().decode())
PY
client=$!
sleep 0.5
kill -TERM "$server"
wait "$client" || fail "the in-flight request failed during shutdown"
python3 -c "
import json,sys; d = json.load(open(sys.argv[1])); assert d['choices'][0]['finish_reason'] in ('stop', 'length'), d" \
  "$work/inflight.json"
status=0; wait "$server" || status=$?
[ "$status" -eq 0 ] || fail "trex serve exited $status after SIGTERM"

# admission by cache memory: a request whose cache cannot fit is 429 with Retry-After
start_server "$work/serve2.out" "$work/serve2.err" --max-kv-mb 0.01
code=$(curl -s -o "$work/429.json" -D "$work/429.headers" -w '%{http_code}' \
  "http://127.0.0.1:$port/v1/completions" -d '{"prompt": "hello", "max_tokens": 64}')
[ "$code" = 429 ] || fail "expected 429, got $code"
grep -qi '^Retry-After: ' "$work/429.headers" || fail "no Retry-After"
grep -q rate_limit_error "$work/429.json" || fail "no OpenAI error object"
kill -TERM "$server"; wait "$server" || fail "second server exit"
echo "serve_openai: OK"
