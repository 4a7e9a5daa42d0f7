"""The compiled tokenizer (engine/sparql/syntax/tokenizer_kernel.pyx) gives
the regex tokenizer's tokens, positions and values for every text it reads,
and leaves every other text to the regex (which then raises its error):
generated texts glued from tricky pieces with and without separators, and
every query of the W3C suites."""

from __future__ import annotations

import random

import pytest

from engine.sparql.syntax import tokenizer_kernel
from engine.sparql.syntax.errors import SparqlSyntaxError
from engine.sparql.syntax.tokenizer import regex_tokens, tokenize
from tests.harness.w3c.manifest import SUITE_ROOT, suite_missing_reason

PIECES = [
    "SELECT", "select", "a", "A", "WHERE", "FILTER", "_", "_x", "_:b1", "_:b.", "_:b-1.x", "_:", "_:-",
    "?x", "?", "$y", "$", "?1a_b", "<http://ex.org/a#b>", "<>", "<a b>", "<a", "<<(", ")>>", "<<", ">>",
    "<=", ">=", "!=", "!", "&&", "&", "||", "|", "|}", "{|", "^^", "^", "~", "(", ")", "{", "}", "[", "]",
    ";", ",", ".", "=", "+", "-", "*", "/", ":", "ex:", "ex:a", "ex:a.b.", "ex.:a", "e-x.y:z", "ex:-a",
    "ex:.a", "ex:%41b", "ex:%4", "ex:a:b", ":a", "1ex:a", "x1:9", "1", "12", "1.", ".5", "1.5", "1e5",
    "1.e-3", ".5E+2", "1.5e", "1e+", "12.34.56", "@en", "@en-US", "@en-", "@en--ltr", "@a-b--", "@",
    '"str"', '""', "'s'", "''", '"a\'b"', "'a\"b'", '"open', "'open", "# comment\n", "#c", "\n", "\t",
    "\r\n", "%", "`", "\x0b", "\x7f", "é", "\\u0041", '"""long"""', "'''l'''",
]


def _same(text: str) -> None:
    fast = tokenizer_kernel.ascii_tokens(text)
    try:
        expected = regex_tokens(text)
    except SparqlSyntaxError:
        assert fast is None, f"the regex refuses {text!r}, the kernel read it: {fast}"
        return
    assert fast is None or fast == expected, text
    assert tokenize(text) == expected


def test_generated_texts_tokenize_as_the_regex_does():
    rng = random.Random(17)
    read = 0
    for _ in range(20_000):
        parts = rng.choices(PIECES, k=rng.randrange(1, 12))
        text = "".join(part + rng.choice(["", "", " ", "\n", "  "]) for part in parts)
        _same(text)
        read += tokenizer_kernel.ascii_tokens(text) is not None
    assert read > 5_000  # the kernel reads most texts, not only the easy few


def test_every_prefix_of_a_query_tokenizes_as_the_regex_does():
    text = ('PREFIX ex: <http://ex.org/> SELECT ?x (COUNT(*) AS ?n) WHERE { ?x ex:p "v"@en-GB ; '
            "ex:q 1.5e3, -2, .5 . _:b ex:r <<( ?x ex:s 'o' )>> FILTER(?x != ex:z && !BOUND(?y)) } # end")
    for end in range(len(text) + 1):
        _same(text[:end])


@pytest.mark.skipif(suite_missing_reason() is not None, reason=str(suite_missing_reason()))
def test_the_w3c_queries_tokenize_as_the_regex_does():
    read = 0
    files = sorted(SUITE_ROOT.parent.rglob("*.rq")) + sorted(SUITE_ROOT.parent.rglob("*.ru"))
    for path in files:
        text = path.read_text(encoding="utf-8", errors="replace")
        _same(text)
        read += tokenizer_kernel.ascii_tokens(text) is not None
    assert files and read > len(files) // 2
