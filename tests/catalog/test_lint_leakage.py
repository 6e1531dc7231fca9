"""The leakage check: giveaway words in what an agent can observe."""

from __future__ import annotations

import pytest

from faultkit.catalog.rules.leakage import DEFAULT_WORDS, find_words, giveaway_words
from faultkit.errors import InputError
from faultkit.workspace import Workspace


@pytest.mark.parametrize("line, words", [
    ("    # inject a short pause before replying", ["inject"]),
    ('    log.error("chaos mode engaged")', ["chaos"]),
    ("    injectDelay = FAULT_RATE * 2", ["fault", "inject"]),
    ("    breakage_count += 1", ["breakage"]),
    ("            break", []),  # a keyword, not a word anyone chose
    ("    default_timeout = 3", []),  # 'default' is not 'fault'
    ("    circuitBreaker.open()", []),
    ('    name = "x-failure-injection"', ["failure-injection", "injection"]),
])
def test_words_in_code(line: str, words: list[str]) -> None:
    assert sorted(find_words(line, DEFAULT_WORDS, code=True)) == sorted(words)


def test_values_and_case() -> None:
    assert find_words("cart-BUGGY:7070", DEFAULT_WORDS) == ["buggy"]
    assert find_words("minishop/cart:1.0.1", DEFAULT_WORDS) == []
    assert find_words("break", DEFAULT_WORDS) == ["break"]  # outside code, a word is a word


def test_faultkit_toml_extends_and_allows(ws: Workspace) -> None:
    (ws.root / "faultkit.toml").write_text('[leakage]\nextra = ["oops"]\nallow = ["deliberately"]\n')
    words = giveaway_words(ws.root)
    assert "oops" in words and "deliberately" not in words and "fault" in words
    (ws.root / "faultkit.toml").write_text('[leakage]\nwords = ["zap"]\n')
    assert giveaway_words(ws.root) == ("zap",)
    (ws.root / "faultkit.toml").write_text('[leakage]\nwords = "zap"\n')
    with pytest.raises(InputError, match="must be a list"):
        giveaway_words(ws.root)
