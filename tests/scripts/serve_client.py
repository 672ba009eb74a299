#!/usr/bin/env python3
"""The official `openai` client against `trex serve` (tests/scripts/serve_openai.sh starts the server).

Usage: serve_client.py BASE_URL API_KEY
Checks chat and completions, streaming (reasoning + content deltas joined = the whole answer), n > 1, seeds, stop
strings, logprobs, OpenAI-style errors (400 naming the field, 404, 401), 64 concurrent clients x 8 requests without an
error and with every stream complete, and that a client disconnecting mid-stream, or giving up on a non-streamed
request, frees its sequence (the /metrics cache gauge returns to 0).
"""
import concurrent.futures as cf
import json
import socket
import sys
import time
import urllib.error
import urllib.request

import openai

base, key = sys.argv[1], sys.argv[2]
client = openai.OpenAI(base_url=base + "/v1", api_key=key, max_retries=0, timeout=120)
MSG = [{"role": "user", "content": "Maximize 3x + 2y subject to x + y <= 4."}]


def metric(name):
    text = urllib.request.urlopen(base + "/metrics", timeout=10).read().decode()
    for line in text.splitlines():
        if line.startswith(name + " "):
            return float(line.split()[1])
    raise AssertionError(f"{name} not in /metrics")


# models
assert [m.id for m in client.models.list().data] == ["trex"]

# chat, greedy: deterministic; usage counts
a = client.chat.completions.create(model="trex", messages=MSG, max_tokens=12, temperature=0)
b = client.chat.completions.create(model="trex", messages=MSG, max_tokens=12, temperature=0)
assert a.choices[0].message.model_dump() == b.choices[0].message.model_dump()
assert a.usage.completion_tokens <= 12 and a.usage.prompt_tokens > 5
assert a.usage.total_tokens == a.usage.prompt_tokens + a.usage.completion_tokens
assert a.choices[0].finish_reason in ("stop", "length")
extra = a.choices[0].message.model_extra or {}
assert "reasoning_content" in extra, a.choices[0].message  # thinking mode: the text before </think>

# seeds: the same seed repeats, n samples are indexed
s1 = client.chat.completions.create(model="trex", messages=MSG, max_tokens=10, temperature=1.0, seed=7, n=3)
s2 = client.chat.completions.create(model="trex", messages=MSG, max_tokens=10, temperature=1.0, seed=7, n=3)
assert [c.index for c in s1.choices] == [0, 1, 2]
assert [c.message.model_dump() for c in s1.choices] == [c.message.model_dump() for c in s2.choices]
assert s1.usage.completion_tokens > 0

# streaming = the same answer, in deltas; usage at the end when asked
reasoning, content, finish, usage = "", "", None, None
for ch in client.chat.completions.create(model="trex", messages=MSG, max_tokens=12, temperature=0, stream=True,
                                         stream_options={"include_usage": True}):
    if ch.usage:
        usage = ch.usage
    for c in ch.choices:
        d = c.delta.model_extra or {}
        reasoning += d.get("reasoning_content") or ""
        content += c.delta.content or ""
        finish = c.finish_reason or finish
assert finish == a.choices[0].finish_reason, finish
assert reasoning == (a.choices[0].message.model_extra or {}).get("reasoning_content", ""), (reasoning, a)
assert content == (a.choices[0].message.content or ""), (content, a)
assert usage is not None and usage.completion_tokens == a.usage.completion_tokens

# completions (raw text), and a stop string cuts the text before it
c = client.completions.create(model="trex", prompt="A factory makes", max_tokens=16, temperature=0)
text = c.choices[0].text
if len(text) >= 6:
    stop = text[3:6]
    cut = client.completions.create(model="trex", prompt="A factory makes", max_tokens=16, temperature=0, stop=[stop])
    assert cut.choices[0].text == text[:text.find(stop)], (cut.choices[0].text, text, stop)
    assert cut.choices[0].finish_reason == "stop"

# logprobs
lp = client.chat.completions.create(model="trex", messages=MSG, max_tokens=5, temperature=0, logprobs=True,
                                    top_logprobs=2)
content_lp = lp.choices[0].logprobs.content
assert len(content_lp) == lp.usage.completion_tokens and all(len(t.top_logprobs) == 2 for t in content_lp)
assert all(t.logprob <= 0 for t in content_lp)

# errors
try:
    client.chat.completions.create(model="trex", messages=MSG, temperature=3.5)
    raise AssertionError("temperature 3.5 accepted")
except openai.BadRequestError as e:
    assert e.body["param"] == "temperature", e.body
try:
    client.chat.completions.create(model="gpt-4o", messages=MSG)
    raise AssertionError("unknown model accepted")
except openai.NotFoundError as e:
    assert e.body["code"] == "model_not_found", e.body
try:
    openai.OpenAI(base_url=base + "/v1", api_key="wrong", max_retries=0).models.list()
    raise AssertionError("wrong key accepted")
except openai.AuthenticationError:
    pass
req = urllib.request.Request(base + "/v1/chat/completions", data=b"{not json",
                             headers={"Authorization": "Bearer " + key, "Content-Type": "application/json"})
try:
    urllib.request.urlopen(req, timeout=10)
    raise AssertionError("malformed JSON accepted")
except urllib.error.HTTPError as e:
    assert e.code == 400 and "error" in json.loads(e.read()), e

# 64 concurrent clients x 8 requests: no error, every stream complete
def one_client(i):
    done = 0
    for j in range(8):
        if (i + j) % 2:
            fin = None
            for ch in client.chat.completions.create(model="trex", messages=MSG, max_tokens=4, temperature=0.7,
                                                     seed=i * 8 + j, stream=True):
                for c in ch.choices:
                    fin = c.finish_reason or fin
            assert fin in ("stop", "length"), fin
        else:
            r = client.completions.create(model="trex", prompt=f"item {i} {j}", max_tokens=4, temperature=0)
            assert r.choices[0].finish_reason in ("stop", "length")
        done += 1
    return done


with cf.ThreadPoolExecutor(64) as pool:
    assert sum(pool.map(one_client, range(64))) == 64 * 8

# a client that disconnects mid-stream frees its sequence
stream = client.chat.completions.create(model="trex", messages=MSG, max_tokens=3000, temperature=0.7, stream=True)
seen = 0
for ch in stream:
    seen += 1
    if seen == 3:
        break
stream.close()
deadline = time.time() + 30
while time.time() < deadline and (metric("trex_batch_size") > 0 or metric("trex_kv_cache_bytes") > 0):
    time.sleep(0.1)
assert metric("trex_batch_size") == 0 and metric("trex_kv_cache_bytes") == 0, "a disconnected stream kept running"
assert metric("trex_kv_reserved_bytes") == 0

# a non-streamed request longer than the server's whole-response wait: its body comes after heartbeat spaces, and
# the client reads the same object as ever. (Sampled lengths depend on the seed: seeds are tried until one runs long.)
def wait_idle(what):
    deadline = time.time() + 30
    while time.time() < deadline and (metric("trex_batch_size") > 0 or metric("trex_kv_cache_bytes") > 0):
        time.sleep(0.1)
    assert metric("trex_batch_size") == 0 and metric("trex_kv_cache_bytes") == 0, what
    assert metric("trex_kv_reserved_bytes") == 0, what


late = False
for seed in range(2, 12):
    t0 = time.time()
    r = client.completions.create(model="trex", prompt="a long one", max_tokens=2500, temperature=0.7, seed=seed)
    assert r.choices[0].finish_reason in ("stop", "length") and r.choices[0].text, r
    assert r.usage.total_tokens == r.usage.prompt_tokens + r.usage.completion_tokens > r.usage.prompt_tokens
    if time.time() - t0 > 1.5:
        late = True
        break
assert late, "no request ran past the server's whole-response wait"
wait_idle("after a late whole response")

# a client that gives up on a non-streamed request (closes its connection) frees its sequence, counted as cancelled
# (499); a long request's client must not have been told anything but the status and heartbeat spaces by then
host, port = base.split("//")[1].split(":")
left = False
for seed in range(2, 12):
    body = json.dumps({"model": "trex", "prompt": "a long one", "max_tokens": 3500, "temperature": 0.7,
                       "seed": seed}).encode()
    sock = socket.create_connection((host, int(port)), timeout=10)
    sock.sendall(b"POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                 + b"Authorization: Bearer " + key.encode() + b"\r\nContent-Length: " + str(len(body)).encode()
                 + b"\r\n\r\n" + body)
    time.sleep(1.5)
    left = metric("trex_batch_size") == 1  # still running when its client leaves
    sock.close()
    if left:
        break
    wait_idle("after a whole response")
assert left, "no request was still running when its client left"
wait_idle("a client that left a non-streamed request kept its sequence running")
assert metric('trex_requests_total{endpoint="/v1/completions",status="499"}') == 1, "not counted as cancelled (499)"
print("serve_client: OK")
