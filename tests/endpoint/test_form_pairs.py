"""The fast reading of query strings and forms gives what ``parse_qsl`` gives."""

import random
import urllib.parse

from endpoint.protocol import form_pairs

ALPHABET = "ab%+&=;é😀 <>{}?#\"'\\\x00\nxX0123456789ABCDEFabcdef"


def test_form_pairs_is_parse_qsl_on_random_text():
    rng = random.Random(5)
    for _ in range(5000):
        text = "".join(rng.choice(ALPHABET) for _ in range(rng.randrange(30)))
        encoded = urllib.parse.quote(text, safe="&=%+\\") if rng.random() < 0.5 else text
        for case in (text, encoded, urllib.parse.urlencode({"query": text, "x": encoded})):
            assert form_pairs(case) == urllib.parse.parse_qsl(case, keep_blank_values=True), repr(case)


def test_malformed_escapes_are_kept_as_parse_qsl_keeps_them():
    for case in ("q=%", "q=%4", "q=%zz", "q=%+1", "q=a%e9b", "q=%C3%A9&&x", "=v", "k", "q=%5C%25"):
        assert form_pairs(case) == urllib.parse.parse_qsl(case, keep_blank_values=True), case
