"""Generated bodies of timestamped N-Triples: the plain form producers write,
and every way of leaving it (escapes, Unicode, language tags, datatypes,
blank nodes, triple terms, comments, CRLF, tabs, late timestamps) or of
breaking the grammar, one random choice at a time."""

from __future__ import annotations

import random

EX = "http://example.org/"
XSD = "http://www.w3.org/2001/XMLSchema#"


def _iri(rng: random.Random) -> str:
    return rng.choice([
        f"<{EX}{rng.randrange(50)}>", f"<{EX}caf\u00e9/{rng.randrange(5)}>", f"<urn:x:{rng.randrange(9)}>",
        f"<{EX}a\\u00E9>", "<relative>", f"<{EX}a b>", f"<{EX}a{{b}}>", f"<{EX}\U0001F600>",
        f"<{EX}{rng.randrange(50)}", "<>", "<:>",
    ] if rng.random() < 0.25 else [f"<{EX}{rng.randrange(50)}>"])


def _blank(rng: random.Random) -> str:
    return rng.choice(["_:b1", "_:x.y-z", "_:a_b", "_:.x", "_:x.", "_:-x", "_:", "_:\u00e9t\u00e9",
                       f"_:n{rng.randrange(30)}"])


def _literal(rng: random.Random) -> str:
    lexical = rng.choice(["x", "", "21.5", "x y . z", "caf\u00e9 # no comment", "a\\\"b", "a\\nb",
                          "tab\there", "\u2028", "q\"q", "\U0001F600", "<x>", "a@b"])
    tail = rng.choice(["", "", "@en", "@en-gb", "@EN", "@-en", "@en-", "@abcdefghi", "@a-b-c",
                       f"^^<{XSD}double>", f"^^<{XSD}string>", f"^^<{XSD}integer", "^^xsd:int",
                       f"^<{XSD}double>", "@"])
    return f'"{lexical}"{tail}'


def _term(rng: random.Random, position: str) -> str:
    pick = rng.random()
    if position == "p":
        return _iri(rng) if pick < 0.97 else _blank(rng)
    if pick < 0.03:
        return f"<<( {_iri(rng)} {_iri(rng)} {_iri(rng)} )>>"
    if position == "s":
        return _iri(rng) if pick < 0.7 else (_blank(rng) if pick < 0.97 else _literal(rng))
    return _iri(rng) if pick < 0.4 else (_blank(rng) if pick < 0.6 else _literal(rng))


def generated_body(rng: random.Random, lines: int, plain: float) -> str:
    """A body of ``lines`` lines; with probability ``plain`` per line only the
    plain form's choices (so whole bodies in the plain form occur too)."""
    out = []
    ms = rng.randrange(0, 10_000)
    for _ in range(lines):
        ms += rng.choice([0, 0, 1, 7])
        stay_plain = rng.random() < plain
        if stay_plain:
            s, p, o = f"<{EX}{rng.randrange(50)}>", f"<{EX}p{rng.randrange(5)}>", rng.choice(
                [f"<{EX}{rng.randrange(50)}>", f'"v{rng.randrange(9)}"', '"w"@en', f'"1"^^<{XSD}integer>',
                 f"_:b{rng.randrange(9)}", '"caf\u00e9"'])
            line = f"{ms} {s} {p} {o} ." if rng.random() > 0.05 else f"{ms}"
        else:
            line = f"{ms} {_term(rng, 's')} {_term(rng, 'p')} {_term(rng, 'o')} ."
            damage = rng.random()
            if damage < 0.05:
                line = line.replace(" ", "\t", 1)
            elif damage < 0.1:
                line = line.replace(" ", "  ", 1)
            elif damage < 0.15:
                line = line[:-2] + "."
            elif damage < 0.2:
                line += " # comment"
            elif damage < 0.25:
                line = "# a comment"
            elif damage < 0.3:
                line = f"{max(ms - 5, 0)}" + line[len(str(ms)):]
            elif damage < 0.33:
                line = ""
            elif damage < 0.36:
                line = line[:-2]
            elif damage < 0.39:
                line = "1970-01-01T00:00:01Z" + line[len(str(ms)):]
            elif damage < 0.42:
                line = f"{ms} "
            elif damage < 0.45:
                line = "9" * 16 + line[len(str(ms)):]
        out.append(line)
    end = rng.choice(["\n", "\n", "", "\r\n"])
    return rng.choice(["\n", "\n", "\n", "\r\n"]).join(out) + end
