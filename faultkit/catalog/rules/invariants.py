"""Whole-catalog rules over the facts of every file: unique ids, each change made once, each entry
where its id says. They read facts (cached per file), so a one-file change re-reads one file."""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterator

from faultkit.catalog.rules.records import CatalogRule, Facts


def _repeats(items: list[Facts], key: Callable[[Facts], Hashable]) -> Iterator[tuple[Facts, Facts]]:
    """(later, first) for every file whose key an earlier file already has."""
    first: dict[Hashable, Facts] = {}
    for item in items:
        k = key(item)
        if k in first:
            yield item, first[k]
        else:
            first[k] = item


def check_unique_ids(items: list[Facts]) -> Iterator[tuple[Facts, str, str]]:
    for item, first in _repeats(items, lambda f: f.id):
        yield item, "id", f"id {item.id!r} is already used by {first.file}"


def check_duplicates(items: list[Facts]) -> Iterator[tuple[Facts, str, str]]:
    for item, first in _repeats(items, lambda f: f.change):
        yield item, "(entry)", f"makes the same change to the same artifact as {first.file}; one of them must go"


def check_location(items: list[Facts]) -> Iterator[tuple[Facts, str, str]]:
    for f in items:
        valid = f.change[:1] != ("(not an entry)",)  # an invalid file's own findings say what is wrong
        if valid and f.file.startswith("catalog/") and f.file != f"catalog/{f.app}/{f.id}.yaml":
            yield f, "id", f"an entry with id {f.id!r} of app {f.app!r} belongs at catalog/{f.app}/{f.id}.yaml"


CATALOG_RULES: tuple[CatalogRule, ...] = (check_unique_ids, check_duplicates, check_location)
