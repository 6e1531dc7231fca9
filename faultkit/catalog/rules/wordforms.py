"""Words as an agent reads them, whatever bytes spell them (issue 32).

A giveaway word can be written so that a byte-wise check misses it and a reader does not:
`ｆault` (fullwidth), `fa\u200bult` (a zero-width space), `fa\u00adult` (a soft hyphen), `fául̈t`
(combining marks), `fаult` (a Cyrillic а), `FaUlT` (mixed case), `faulting` (another form of the
word), `faultinjection` or `bugfix` (the word with another glued on). So each token is compared
on its normal form: NFKC, without format characters (zero-width, soft hyphen, bidi controls) and
combining marks, each letter that only looks Latin mapped to the Latin letter it looks like (the
confusables of Unicode TR39, from the `confusable-homoglyphs` package), then case-folded. A word
form is a token with the word's Snowball (Porter2) stem that is at least as long as the word, so
`injects` and `faulting` count and `intent` (the stem of `intentional`) does not. A compound is
a token that begins with a listed word followed by at least three more letters (`bugfix`,
`chaosmonkey`); shorter tails are suffixes, which the stem settles (`breaker` is not `break`).
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from functools import cache, lru_cache
from typing import Any

_PARTS = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+")
_ASCII_TOKEN = re.compile(r"[A-Za-z0-9]+")
_DROP = frozenset({"Mn", "Me", "Cf"})  # combining marks and format characters (zero-width, soft hyphen)
MIN_TAIL = 3  # letters after a listed word that make a compound rather than a suffix
# Compounds of a listed word that are ordinary technical words, not descriptions of a change
COMPOUNDS_ALLOWED = frozenset({"breakpoint", "breakpoints", "breakdown", "breakdowns", "breakthrough"})


@dataclass(frozen=True)
class Token:
    raw: str  # as written
    text: str  # normal form, case kept (camelCase boundaries are read from it)


@cache
def _homoglyphs() -> dict[str, str]:
    """Each non-ASCII character that looks like an ASCII letter or digit, mapped to it."""
    from confusable_homoglyphs.confusables import confusables_data  # loads its table: only for non-ASCII text

    table: dict[str, str] = {}
    for char, glyphs in confusables_data.items():
        if len(char) == 1 and not char.isascii():
            found = [g["c"] for g in glyphs if len(g["c"]) == 1]
            ascii_ = [c for c in found if c.isascii() and c.isalnum()]
            table[char] = (ascii_ or found or [char])[0]
    return table


@lru_cache(maxsize=8192)
def fold_char(char: str) -> str:
    """One character's normal form: "" for a format character or a combining mark."""
    text = unicodedata.normalize("NFD", unicodedata.normalize("NFKC", char))
    out = []
    for c in text:
        if unicodedata.category(c) in _DROP:
            continue
        if not c.isascii():
            table = _homoglyphs()
            mapped = table.get(c.lower()) or table.get(c) or c
            mapped = table.get(mapped, mapped) if not mapped.isascii() else mapped  # one more step: κ -> ĸ -> k
            c = mapped.upper() if c.isupper() else mapped.lower() if mapped.isascii() else mapped
        out.append(c)
    return "".join(out)


def tokens(text: str) -> list[Token]:
    """The alphanumeric tokens of `text`, each with its normal form; a character that vanishes in
    the normal form (a zero-width space, a soft hyphen, a combining mark) does not split a token."""
    if text.isascii():  # nearly every line: nothing to normalise
        return [Token(t, t) for t in _ASCII_TOKEN.findall(text)]
    out: list[Token] = []
    raw: list[str] = []
    norm: list[str] = []
    for char in text:
        folded = fold_char(char)
        if folded == "" or (folded.isascii() and folded.isalnum()):
            raw.append(char)
            norm.append(folded)
            continue
        if norm and "".join(norm):
            out.append(Token("".join(raw), "".join(norm)))
        raw, norm = [], []
    if norm and "".join(norm):
        out.append(Token("".join(raw), "".join(norm)))
    return out


def parts(text: str) -> list[str]:
    """The lower-case camelCase and snake_case parts of a token's normal form."""
    return [p.lower() for p in _PARTS.findall(text)]


@cache
def _stemmer() -> Any:
    import snowballstemmer

    return snowballstemmer.stemmer("english")


@lru_cache(maxsize=65536)
def stem(word: str) -> str:
    return str(_stemmer().stemWord(word))


def form_of(candidate: str, words: tuple[str, ...]) -> tuple[str, str] | None:
    """(listed word, how) when `candidate` (lower case, one part) is another form of a listed
    one-part word or a compound beginning with one; None otherwise. Exact matches are not asked here."""
    for word in words:
        if len(candidate) >= len(word) and stem(candidate) == stem(word):
            return word, "form"
    if candidate in COMPOUNDS_ALLOWED:
        return None
    for word in words:
        if len(word) >= 3 and candidate.startswith(word) and len(candidate) - len(word) >= MIN_TAIL:
            return word, "compound"
    return None
