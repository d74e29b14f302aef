"""Links (``plinth/meta.py``): a full or short link parses to the item it names, and its
``href`` is the one ``item_href`` builds from the same parts."""

from __future__ import annotations

import pytest

from plinth.meta import item_href, parse_link


@pytest.mark.parametrize(
    ("link", "href", "parts"),
    [
        ("/org/acme", "/org/acme", ("acme", "org", "acme", None)),
        ("/org/acme/gvc/prod", "/org/acme/gvc/prod", ("acme", "gvc", "prod", None)),
        ("//gvc/prod", "/org/acme/gvc/prod", ("acme", "gvc", "prod", None)),
        ("/org/acme/secret/db", "/org/acme/secret/db", ("acme", "secret", "db", None)),
        ("//secret/db", "/org/acme/secret/db", ("acme", "secret", "db", None)),
        ("/org/other/gvc/prod/workload/web", "/org/other/gvc/prod/workload/web", ("other", "workload", "web", "prod")),
        ("//gvc/prod/identity/app", "/org/acme/gvc/prod/identity/app", ("acme", "identity", "app", "prod")),
    ],
)
def test_a_link_parses_to_its_item_and_its_href_is_item_href(
    link: str, href: str, parts: tuple[str, str, str, str | None]
) -> None:
    parsed = parse_link(link, "acme")
    assert parsed is not None
    assert (parsed.org, parsed.kind, parsed.name, parsed.gvc) == parts
    assert parsed.href == href == item_href(*parts)


@pytest.mark.parametrize("link", ["", "org/acme", "/org/", "/org/acme/secret", "//gvc/prod/workload", "/org//x/y"])
def test_a_malformed_link_parses_to_nothing(link: str) -> None:
    assert parse_link(link, "acme") is None
