"""Deterministic, varied tokenizer test corpus (documents as bytes).

Used by tokenizer_parity.py (parity with HF tokenizers on the real DeepSeek-V4 tokenizer.json, the golden fixtures)
and by `trex bench tokenizer` (--valid-only: the HF peer needs str). Sources: the Python standard library (English
prose in docstrings and code), C headers, the license texts in /usr/share/common-licenses, sympy's LaTeX printer,
and synthetic generators (Chinese/Japanese built from the tokenizer's own CJK vocabulary, digits, whitespace runs,
emoji sequences, special-token strings and near misses, random Unicode, invalid UTF-8).

    python tests/reference/tokenizer_corpus.py --out corpus.txt --mb 10 --valid-only   # one text file
"""
import argparse
import glob
import json
import os
import random
import sysconfig

KINDS = ["english", "code", "chinese", "latex", "digits", "whitespace", "emoji", "special", "unicode", "mixed",
         "invalid"]


def _read(path, limit=200_000):
    try:
        with open(path, "rb") as f:
            return f.read(limit)
    except OSError:
        return b""


class Sources:
    def __init__(self, seed, tokenizer_json=None):
        self.rng = random.Random(seed)
        stdlib = sysconfig.get_paths()["stdlib"]
        self.py_files = sorted(glob.glob(os.path.join(stdlib, "*.py")))
        self.c_files = sorted(glob.glob("/usr/include/*.h"))
        self.licenses = sorted(p for p in glob.glob("/usr/share/common-licenses/*") if os.path.isfile(p))
        self.cjk_words, self.special = self._vocab(tokenizer_json)

    @staticmethod
    def _vocab(path):
        words, special = [], []
        if path and os.path.exists(path):
            with open(path, encoding="utf-8") as f:
                j = json.load(f)
            from_bl = _byte_decoder()
            for tok in j["model"]["vocab"]:
                try:
                    s = bytes(from_bl[c] for c in tok).decode("utf-8")
                except (KeyError, UnicodeDecodeError):
                    continue
                if s and all("\u4e00" <= c <= "\u9fa5" or "\u3040" <= c <= "\u30ff" for c in s):
                    words.append(s)
            special = [t["content"] for t in j.get("added_tokens", [])]
        if not words:  # no tokenizer: a fixed list of common characters
            words = list("的一是在不了有和人这中大为上个国我以要他时来用们生到作地于出就分对成会可主发年动同工也能下过子说产种面而方后多定行学法所民得经十三之进着等部度家电力里如水化高自二理起小物现实加量都两体制机当使点从业本去把性好应开它合还因由其些然前外天政四日那社义事平形相全表间样与关各重新线内数正心反你明看原又么利比或但质气第向道命此变条只没结解问意建月公无系军很情者最立代想已通并提直题党程展五果料象员革位入常文总次品式活设及管特件长求老头基资边流路级少图山统接知较将组见计别她手角期根论运农指几九区强放决西被干做必战先回则任取据处队南给色光门即保治北造百规热领七海口东导器压志世金增争济阶油思术极交受联什认六共权收证改清己美再采转更单风切打白教速花带安场身车例真务具万每目至达走积示议声报斗完类八离华名确才科张信马节话米整空元况今集温传土许步群广石记需段研界拉林律叫且究观越织装影算低持音众书布复容儿须际商非验连断深难近矿千周委素技备半办青省列习响约支般史感劳便团往酸历市克何除消构府称太准精值号率族维划选标写存候毛亲快效斯院查江型眼王按格养易置派层片始却专状育厂京识适属圆包火住调满县局照参红细引听该铁价严龙飞")
        if not special:
            special = ["<｜begin▁of▁sentence｜>", "<｜end▁of▁sentence｜>", "<｜User｜>", "<｜Assistant｜>",
                       "<think>", "</think>"]
        return sorted(set(words)), special


def _byte_decoder():
    bs = list(range(ord("!"), ord("~") + 1)) + list(range(0xA1, 0xAD)) + list(range(0xAE, 0x100))
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return {chr(c): b for b, c in zip(bs, cs)}


class _Acc(list):
    """A list of str pieces that tracks its UTF-8 size."""
    def __init__(self):
        super().__init__()
        self.n = 0

    def append(self, x):
        super().append(x)
        self.n += len(x.encode())


def _slice(rng, data, size):
    if len(data) <= size:
        return data
    start = rng.randrange(0, len(data) - size)
    return data[start:start + size]


def gen_english(s, rng, size):
    src = rng.choice(s.licenses + s.py_files[:50]) if s.licenses else rng.choice(s.py_files)
    return _slice(rng, _read(src), size)


def gen_code(s, rng, size):
    src = rng.choice(s.py_files + s.c_files)
    return _slice(rng, _read(src), size)


CJK_PUNCT = "，。、；：？！“”‘’（）《》【】…—"


def gen_chinese(s, rng, size):
    out = []
    n = 0
    while n < size:
        r = rng.random()
        if r < 0.80:
            w = rng.choice(s.cjk_words)
        elif r < 0.92:
            w = rng.choice(CJK_PUNCT)
        elif r < 0.96:
            w = rng.choice([" ", "\n", "2024年", "GPU", " DeepSeek-V4 ", "3.14", "（注）", "\n\n"])
        else:
            w = "".join(chr(rng.randrange(0x3041, 0x30FF)) for _ in range(rng.randrange(1, 6)))
        out.append(w)
        n += len(w.encode())
    return "".join(out).encode()


def _latex_pool(seed, count=300):
    """LaTeX of random sympy expressions (made once: sympy is slow)."""
    rng = random.Random(seed)
    pool = []
    try:
        import sympy as sp
        x, y, z, n = sp.symbols("x y z n")
        atoms = [x, y, z, n, sp.pi, sp.E, sp.Integer(2), sp.Rational(3, 7), sp.sqrt(x), sp.Symbol("alpha"),
                 sp.Symbol("beta_1"), sp.Symbol("theta")]
        funcs = [sp.sin, sp.cos, sp.exp, sp.log, sp.sqrt, sp.gamma, sp.Abs]

        def expr(d):
            if d == 0:
                return rng.choice(atoms)
            k = rng.randrange(6)
            a, b = expr(d - 1), expr(d - 1)
            return [a + b, a * b, a / (b + 1), a ** 2, rng.choice(funcs)(a), sp.Integral(a, x)][k]
        for _ in range(count):
            pool.append(sp.latex(expr(rng.randrange(1, 4))))
    except ImportError:
        pass
    pool += ["\\sum_{i=1}^{n} \\frac{x_i^2}{\\sqrt{n}}", "\\int_0^\\infty e^{-t^2}\\,dt = \\frac{\\sqrt{\\pi}}{2}",
             "\\mathbf{A}\\mathbf{x} = \\lambda \\mathbf{x}", "\\lim_{h \\to 0} \\frac{f(x+h)-f(x)}{h}",
             "\\begin{pmatrix} a & b \\\\ c & d \\end{pmatrix}", "\\max_{x \\ge 0} c^\\top x \\text{ s.t. } Ax \\le b"]
    return pool


def gen_latex(s, rng, size):
    if not hasattr(s, "latex"):
        s.latex = _latex_pool(7)
    parts = _Acc()
    while parts.n < size:
        wrap = rng.choice(["$%s$", "$$%s$$", "\\[%s\\]", "\\begin{equation}\n%s\n\\end{equation}",
                           "Let $f(x) = %s$ for all $x \\in \\mathbb{R}$.", "\\frac{%s}{2}", "\\begin{align}\n  %s &= 0 \\\\\n\\end{align}"])
        parts.append((wrap % rng.choice(s.latex)) + rng.choice([" ", "\n", ",\n", ". ", "\n\n"]))
    return "".join(parts).encode()[:size]


def gen_digits(s, rng, size):
    out = _Acc()
    while out.n < size:
        k = rng.randrange(8)
        if k == 0:
            out.append("".join(rng.choice("0123456789") for _ in range(rng.randrange(1, 300))))
        elif k == 1:
            out.append("{:,}".format(rng.randrange(10 ** rng.randrange(1, 20))))
        elif k == 2:
            out.append("%d.%0*d" % (rng.randrange(10 ** 6), rng.randrange(1, 12), rng.randrange(10 ** 6)))
        elif k == 3:
            out.append("%04d-%02d-%02d %02d:%02d" % (rng.randrange(1900, 2100), rng.randrange(1, 13),
                                                     rng.randrange(1, 29), rng.randrange(24), rng.randrange(60)))
        elif k == 4:  # other Unicode digits and numbers
            out.append("".join(rng.choice("٠١٢٣٤٥٦٧٨٩０１２３４５６７８９²³¹¼½ⅠⅡⅢ①②③߀०१२३") for _ in range(rng.randrange(1, 40))))
        elif k == 5:
            out.append("x%d=%d*%d" % (rng.randrange(100), rng.randrange(10 ** 9), rng.randrange(10 ** 5)))
        elif k == 6:
            out.append("0x%X 0b%s 1e-%d" % (rng.randrange(2 ** 64), bin(rng.randrange(2 ** 20))[2:],
                                           rng.randrange(300)))
        else:
            out.append("第%d章 共%d页" % (rng.randrange(1000), rng.randrange(100000)))
        out.append(rng.choice([" ", "\n", ", ", "", "\t"]))
    return "".join(out).encode()[:size]


WS = [" ", "  ", "    ", "\t", "\n", "\r\n", "\r", "\n\n", "\u00a0", "\u3000", "\u2028", "\u2029", "\u0085",
      "\u180e", "\u200b", "\u2003", "\u202f", "\x0b", "\x0c", "\x1c", "\x1f", "\ufeff"]


def gen_whitespace(s, rng, size):
    out = _Acc()
    while out.n < size:
        r = rng.random()
        if r < 0.5:
            out.append("".join(rng.choice(WS) for _ in range(rng.randrange(1, 40))))
        elif r < 0.6:
            out.append(" " * rng.randrange(1, 2000))
        else:
            out.append(rng.choice(["word", "x", "中文", "(", ")", "!!", "a.b", "--", "é", "1", "#", "'s", "don't"]))
    return "".join(out).encode()[:size]


EMOJI_BASE = list(range(0x1F600, 0x1F650)) + list(range(0x1F300, 0x1F5FF, 3)) + list(range(0x1F900, 0x1F9FF, 2)) + \
    [0x2764, 0x2705, 0x26A1, 0x2B50, 0x1FAE0, 0x1F6DC, 0x1FA75]


def gen_emoji(s, rng, size):
    out = _Acc()
    while out.n < size:
        k = rng.randrange(6)
        if k == 0:
            out.append(chr(rng.choice(EMOJI_BASE)))
        elif k == 1:  # ZWJ family / profession sequences
            out.append("\u200d".join(chr(rng.choice([0x1F468, 0x1F469, 0x1F467, 0x1F466, 0x1F4BB, 0x1F52C]))
                                     for _ in range(rng.randrange(2, 5))))
        elif k == 2:  # skin tones
            out.append(chr(rng.choice([0x1F44D, 0x1F44B, 0x1F9D1])) + chr(rng.randrange(0x1F3FB, 0x1F400)))
        elif k == 3:  # flags
            out.append(chr(0x1F1E6 + rng.randrange(26)) + chr(0x1F1E6 + rng.randrange(26)))
        elif k == 4:
            out.append(rng.choice(["\u2764\ufe0f", "\u263a\ufe0e", "1\ufe0f\u20e3", "#\ufe0f\u20e3"]))
        else:
            out.append(rng.choice([" ", "great ", "好的", "!", "\n", ":)"]))
    return "".join(out).encode()[:size]


def gen_special(s, rng, size):
    out = []
    base = s.special[:60] + [t for t in s.special if "place" not in t][:80]
    near = ["<｜User", "<think", "</think >", "<｜begin▁of▁sentence", "｜>", "<|EOT|", "<<think>>", "</think></think>",
            "<think><think>", "<｜end▁of▁sentence｜>", "<｜Assistant｜><think>", "｜DSML｜", "<dsml:", "</dsml:x>"]
    out = _Acc()
    while out.n < size:
        r = rng.random()
        if r < 0.35:
            out.append(rng.choice(base))
        elif r < 0.55:
            out.append(rng.choice(near))
        else:
            out.append(rng.choice(["Hello", " world", "\n", " ", "中文", "123", "x<y", "<", ">", "｜", "▁"]))
    return "".join(out).encode()[:size]


UNICODE_BLOCKS = [(0x20, 0x7F), (0xA0, 0x250), (0x300, 0x370), (0x370, 0x530), (0x590, 0x700), (0x900, 0xE80),
                  (0x1100, 0x1200), (0x1E00, 0x2000), (0x2000, 0x2BFF), (0x3000, 0x3100), (0x3400, 0x4DBF),
                  (0x4E00, 0x9FFF), (0xAC00, 0xD7A3), (0xF900, 0xFAFF), (0xFE00, 0xFFFD), (0x10000, 0x10FFF),
                  (0x1D400, 0x1D7FF), (0x1F000, 0x1FAFF), (0x20000, 0x2A6DF), (0xE0000, 0xE007F), (0xF0000, 0xF00FF)]


def gen_unicode(s, rng, size):
    out = _Acc()
    while out.n < size:
        if rng.random() < 0.15:
            cp = rng.randrange(0, 0x110000)
        else:
            lo, hi = rng.choice(UNICODE_BLOCKS)
            cp = rng.randrange(lo, hi)
        if 0xD800 <= cp <= 0xDFFF:
            continue
        out.append(chr(cp))
        if rng.random() < 0.1:
            out.append(" ")
    return "".join(out).encode()[:size].decode("utf-8", "ignore").encode()


INVALID = [b"\x80", b"\xbf", b"\xc0\xaf", b"\xc3", b"\xe4\xb8", b"\xed\xa0\x80", b"\xf0\x9f\x98", b"\xf4\x90\x80\x80",
           b"\xf5", b"\xff", b"\xfe\xff", b"\xe0\x80\x80", b"\xf8\x88\x80\x80\x80", b"\x00", b"\xc2\x41"]


def gen_invalid(s, rng, size):
    out = bytearray()
    while len(out) < size:
        r = rng.random()
        if r < 0.3:
            out += rng.choice(INVALID)
        elif r < 0.4:
            out += bytes(rng.randrange(256) for _ in range(rng.randrange(1, 30)))
        elif r < 0.5:
            t = rng.choice(["中文", "é", "😀", "Привет", "<think>"]).encode()
            out += t[:rng.randrange(1, len(t) + 1)]
        else:
            out += rng.choice([b"hello ", b"world", b" ", b"\n", "中文".encode(), b"123", b"<think>", b"  "])
    return bytes(out[:size])


GENERATORS = {"english": gen_english, "code": gen_code, "chinese": gen_chinese, "latex": gen_latex,
              "digits": gen_digits, "whitespace": gen_whitespace, "emoji": gen_emoji, "special": gen_special,
              "unicode": gen_unicode, "invalid": gen_invalid}


def gen_mixed(s, rng, size):
    out = b""
    while len(out) < size:
        k = rng.choice([k for k in GENERATORS if k != "invalid"])
        out += GENERATORS[k](s, rng, rng.randrange(20, 400))
    return out[:size]


GENERATORS["mixed"] = gen_mixed
WEIGHTS = {"english": 4, "code": 4, "chinese": 3, "latex": 1, "digits": 1, "whitespace": 1, "emoji": 1,
           "special": 1, "unicode": 1, "mixed": 2, "invalid": 1}


def documents(total_bytes, seed=0, tokenizer_json=None, valid_only=False, max_doc=16384):
    """[(kind, bytes)] totalling at least total_bytes."""
    s = Sources(seed, tokenizer_json)
    rng = random.Random(seed + 1)
    kinds = [k for k in KINDS if not (valid_only and k == "invalid")]
    weights = [WEIGHTS[k] for k in kinds]
    docs, n = [], 0
    while n < total_bytes:
        k = rng.choices(kinds, weights)[0]
        size = int(min(max_doc, 10 ** rng.uniform(1, 4.3)))
        d = GENERATORS[k](s, rng, size)
        if valid_only:
            d = d.decode("utf-8", "replace").encode()
        if not d:
            continue
        docs.append((k, d))
        n += len(d)
    return docs


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", required=True)
    ap.add_argument("--mb", type=float, default=10.0)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--tokenizer", default=None, help="tokenizer.json whose CJK vocabulary seeds the Chinese text")
    ap.add_argument("--valid-only", action="store_true", help="valid UTF-8 only (documents joined by newlines)")
    a = ap.parse_args()
    docs = documents(int(a.mb * 1e6), a.seed, a.tokenizer, a.valid_only)
    with open(a.out + ".tmp", "wb") as f:
        for _, d in docs:
            f.write(d)
            f.write(b"\n")
    os.replace(a.out + ".tmp", a.out)
    print("wrote %s: %d documents, %d bytes" % (a.out, len(docs), sum(len(d) + 1 for _, d in docs)))


if __name__ == "__main__":
    main()
