"""Information leakage: nothing an agent can observe may give a fault away (SPEC.md section 1).

What an agent can observe of a fault: the lines and file names its patch adds (comments, log text,
string literals, identifiers), the new value of a changed setting (image tags included), and the log
message it produces. Each is checked for giveaway words, matched as whole words or as parts of
identifiers (`injectDelay`, `FAULT_RATE`, `chaos_mode`), case-insensitively. A language keyword such
as `break` in code is not a word anyone wrote to describe the change, so it is not counted there.

The list is configurable in `faultkit.toml` at the repository root:

    [leakage]
    extra = ["oops"]     # added to the default list
    allow = ["break"]    # removed from the default list
    # words = [...]      # replaces the default list entirely
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path, PurePosixPath
from stat import S_ISREG
from typing import Any

from faultkit.catalog.model import Entry
from faultkit.catalog.patches import read_patch, safe_path
from faultkit.catalog.placeholders import TODO, is_todo, todo_paths
from faultkit.catalog.rules import wordforms
from faultkit.catalog.rules.context import Context
from faultkit.catalog.rules.records import Loaded
from faultkit.errors import FaultkitError, InputError
from faultkit.tomlio import load_toml
from faultkit.tomlio import table as toml_table

CONFIG_FILE = "faultkit.toml"

DEFAULT_WORDS: tuple[str, ...] = (
    "fault", "faults", "faulty", "faultkit", "fault-injection", "failure-injection",
    "bug", "bugs", "buggy", "inject", "injected", "injecting", "injection", "injector",
    "chaos", "break", "breaks", "breaking", "broken", "breakage",
    "defect", "defects", "defective", "sabotage", "sabotaged", "sabotaging",
    "misconfigure", "misconfigured", "misconfiguration", "deliberate", "deliberately",
    "intentional", "intentionally",
)
# Keywords of common service languages that are also giveaway words; in code they are syntax.
KEYWORDS = frozenset({"break"})

# identifiers outside strings and comments, with the characters a normal form drops kept inside them
_IDENTIFIER = re.compile(r"[^\W\d][\w\u00ad\u034f\u180e\u200b-\u200f\u2060-\u2064\ufeff\u0300-\u036f]*")
_GLUE = re.compile(r"\s*\+?\s*")  # what may stand between two literals that make one string
_LEXEME = re.compile(r'"(?:\\.|[^"\\])*"?|\'(?:\\.|[^\'\\])*\'?|`[^`]*`?|#.*$|//.*$|/\*.*?(?:\*/|$)')


@dataclass(frozen=True)
class Leak:
    where: str  # "code.patch", "config.new", "log.message", "title"
    word: str
    text: str  # the offending line or value, shortened
    detail: str = ""  # which written form matched the word, when it is not the word itself
    what: str = ""  # what of `where` holds it, when not the default (a file name of the patch)

    def message(self) -> str:
        what = self.what or {
            "code.patch": "a line the patch adds",
            "config.new": "the new value",
            "log.message": "the log message the fault produces",
            "title": "the title (not shown to agents, but keep it neutral)",
        }.get(self.where, self.where)
        detail = f" ({self.detail})" if self.detail else ""
        return f"{self.word!r} in {what} gives the fault away{detail}: {self.text!r}; an agent can read it"


@dataclass(frozen=True)
class Match:
    word: str  # the listed word
    how: str  # "word", "normalised", "form", "compound", "joined"
    found: str  # what was written: the token, or the joined string literals

    def detail(self) -> str:
        # a look-alike letter reads as the Latin one: its code point is shown beside it
        found = repr(self.found) + ("" if self.found.isascii() else f" ({ascii(self.found)})")
        return {
            "word": "",
            "normalised": f"{found} matches {self.word!r} after normalisation",
            "form": f"{found} is a form of {self.word!r}",
            "compound": f"{found} begins with {self.word!r}",
            "joined": f"adjacent string literals join into {found}",
        }[self.how]


def parts(text: str) -> list[str]:
    """Lowercase word parts of the normal form: `injectFault_rate` -> inject, fault, rate."""
    return [p for token in wordforms.tokens(text) for p in wordforms.parts(token.text)]


@lru_cache(maxsize=8)
def _words_cached(root: str, stamp: tuple[int, int]) -> tuple[str, ...]:
    path = Path(root) / CONFIG_FILE
    words = list(DEFAULT_WORDS)
    if stamp[0] < 0:
        return tuple(words)
    table = toml_table(load_toml(path), "leakage", path)
    for key in ("words", "extra", "allow"):
        value = table.get(key, [])
        if not isinstance(value, list) or not all(isinstance(w, str) and w.strip() for w in value):
            raise InputError(f"{path}: leakage.{key} must be a list of non-empty strings")
    if "words" in table:
        words = list(table["words"])
    words += table.get("extra", [])
    allow = {w.lower() for w in table.get("allow", [])}
    return tuple(dict.fromkeys(w.lower() for w in words if w.lower() not in allow))


def giveaway_words(root: Path) -> tuple[str, ...]:
    """The default list, extended or overridden by the repository's faultkit.toml."""
    path = root / CONFIG_FILE
    if not path.exists() and not path.is_symlink():
        return _words_cached(str(root), (-1, -1))
    try:
        info = path.stat()
    except OSError:
        info = None
    if info is None or not S_ISREG(info.st_mode):
        load_toml(path)  # refuses a FIFO, device or symlink loop with the file named, before any open
        raise InputError(f"{path}: not a regular file")  # not reached: load_toml refused it
    return _words_cached(str(root), (info.st_mtime_ns, info.st_size))


def find_words(text: str, words: Iterable[str], code: bool = False) -> list[str]:
    """The giveaway words in `text`; with code=True, bare language keywords outside strings and
    comments are syntax and do not count."""
    return [m.word for m in find_matches(text, words, code)]


def find_matches(text: str, words: Iterable[str], code: bool = False) -> list[Match]:
    """Each giveaway word in `text` once, in the list's order, with the form that matched it."""
    words = tuple(words)
    if not code:
        return _ordered(_match_tokens(wordforms.tokens(text), words), words)
    found: list[Match] = []
    rest = text
    for lexeme in _LEXEME.finditer(text):
        found += _match_tokens(wordforms.tokens(lexeme.group(0)), words)
        rest = rest.replace(lexeme.group(0), " ", 1)
    names = [t for t in _IDENTIFIER.findall(rest) if t not in KEYWORDS]
    found += _match_tokens([tok for name in names for tok in wordforms.tokens(name)], words)
    return _ordered(found, words)


def _ordered(found: list[Match], words: tuple[str, ...]) -> list[Match]:
    first: dict[str, Match] = {}
    for m in found:
        first.setdefault(m.word, m)
    return [first[w] for w in words if w in first]


@lru_cache(maxsize=1024)
def _word_parts(word: str) -> tuple[str, ...]:
    return tuple(parts(word))


def _match_tokens(toks: list[wordforms.Token], words: tuple[str, ...]) -> list[Match]:
    """Listed words as written (whole words or parts of identifiers, also spanning several), then
    the tokens none matched, on their normal form: mixed case, other forms of a word, compounds."""
    split = [(tok, wordforms.parts(tok.text)) for tok in toks]
    seq = [p for _, ps in split for p in ps]
    out: list[Match] = []
    for word in _match(seq, words):
        first = _word_parts(word)[0]
        tok = next((t for t, ps in split if first in ps), None)
        plain = tok is None or tok.raw == tok.text
        out.append(Match(word, "word" if plain else "normalised", tok.raw if tok else word))
    matched = {p for m in out for p in _word_parts(m.word)}
    single = tuple(w for w in words if len(_word_parts(w)) == 1)
    for tok, ps in split:
        if matched.intersection(ps):
            continue
        whole = tok.text.lower()
        if whole in single:
            out.append(Match(whole, "normalised", tok.raw))
            continue
        for candidate in dict.fromkeys([whole, *ps]):
            form = wordforms.form_of(candidate, single)
            if form:
                out.append(Match(form[0], form[1], tok.raw))
                break
    return out


def _match(seq: list[str], words: Iterable[str]) -> list[str]:
    present = set(seq)  # most words are absent: a set look-up settles them before any scan
    out = []
    for word in words:
        want = _word_parts(word)
        n = len(want)
        if not n or want[0] not in present:
            continue
        if n == 1 or any(tuple(seq[i:i + n]) == want for i in range(len(seq) - n + 1)):
            out.append(word)
    return out


def joined_literals(text: str) -> list[str]:
    """Each string that adjacent literals make (`"fa" "ult"`, `"fa" + "ult"`, across lines too)."""
    out: list[str] = []
    pieces: list[str] = []
    end = -1
    for lexeme in _LEXEME.finditer(text):
        value = lexeme.group(0)
        if value[0] not in "\"'`" or len(value) < 2 or value[-1] != value[0]:
            pieces, end = [], -1
            continue
        if pieces and _GLUE.fullmatch(text[end:lexeme.start()]):
            pieces.append(value[1:-1])
        else:
            if len(pieces) > 1:
                out.append("".join(pieces))
            pieces = [value[1:-1]]
        end = lexeme.end()
    if len(pieces) > 1:
        out.append("".join(pieces))
    return out


def patch_leaks(files: Iterable[str], added: Iterable[str], words: tuple[str, ...]) -> list[Leak]:
    """Leaks in the names of the files a patch touches (every folder of the path, not only the last
    name: `src/cart/chaos/x.py`) and in the lines it adds, adjacent string literals joined."""
    leaks = []
    for f in files:
        for part in PurePosixPath(f).parts:
            leaks += [Leak("code.patch", m.word, f, m.detail() or f"the name {part!r}", "a file name of the patch")
                      for m in find_matches(part, words)]
    added = list(added)
    seen: set[str] = set()
    for line in added:
        for m in find_matches(line, words, code=True):
            leaks.append(Leak("code.patch", m.word, _short(line), m.detail()))
            seen.add(m.word)
    for joined in joined_literals("\n".join(added)):
        leaks += [Leak("code.patch", m.word, _short(joined), Match(m.word, "joined", joined).detail())
                  for m in find_matches(joined, words) if m.word not in seen]
    return leaks


def entry_leaks(root: Path, data: Mapping[str, Any] | Entry, words: tuple[str, ...] | None = None) -> list[Leak]:
    """Every leak in an entry (plain data or Entry) and its patch; the title is not included."""
    words = giveaway_words(root) if words is None else words
    d = data.raw if isinstance(data, Entry) else data  # read-only mappings both: no copy needed
    code = (d.get("code") or {}).get("patch")
    new = (d.get("config") or {}).get("new")
    log = (d.get("log") or {}).get("message")
    leaks: list[Leak] = []
    if code:
        try:
            info = read_patch(safe_path(root, code, "patch"))
        except FaultkitError:
            info = None  # check_code reports an unreadable patch
        if info:
            leaks += patch_leaks(info.files, info.added, words)
    if isinstance(new, str):
        leaks += [Leak("config.new", m.word, new, m.detail()) for m in find_matches(new, words)]
    if isinstance(log, str) and not is_todo(log):
        leaks += [Leak("log.message", m.word, log, m.detail()) for m in find_matches(log, words)]
    return leaks


def title_leaks(root: Path, title: str, words: tuple[str, ...] | None = None) -> list[Leak]:
    words = giveaway_words(root) if words is None else words
    return [Leak("title", m.word, title, m.detail()) for m in find_matches(title, words)]


def _short(line: str, limit: int = 90) -> str:
    line = line.strip()
    return line if len(line) <= limit else line[: limit - 3] + "..."


# ------------------------------------------------------------------ lint rules


def check_leakage(ctx: Context, e: Entry) -> Iterator[tuple[str, str]]:
    """Lint rule `leakage`: giveaway words in what an agent can observe of the fault."""
    for leak in entry_leaks(ctx.workspace.root, e, _words(ctx)):
        yield leak.where, leak.message()


def check_title(ctx: Context, e: Entry) -> Iterator[tuple[str, str, str]]:
    """Lint rule `title` (a warning): agents never see titles, but reports and schedules show them."""
    for leak in title_leaks(ctx.workspace.root, e.title, _words(ctx)):
        yield "title", leak.message(), "warning"


def check_todo(ctx: Context, item: Loaded) -> Iterator[tuple[str, str]]:
    """Lint rule `todo` (a file rule, so it also reads files whose placeholders break the schema):
    a value starting with TODO is a placeholder left by `faultkit author`."""
    data = item.located.data if item.located else None
    # one C-speed scan of the whole document settles the many files without a placeholder
    if isinstance(data, dict) and TODO in json.dumps(data, default=str, ensure_ascii=False):
        for path, value in todo_paths(data):
            yield path, f"still a placeholder ({_short(value, 70)!r}); fill it in"


def _words(ctx: Context) -> tuple[str, ...]:
    """The word list, read once per run (not once per entry: faultkit.toml is stat'ed each time)."""
    if ctx.words is None:
        ctx.words = giveaway_words(ctx.workspace.root)
    return ctx.words
