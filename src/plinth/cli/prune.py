"""``plinth apply --prune --selector TAG=VALUE``: delete what the files no longer hold.

After every document applied, the items that carry the tag ``TAG`` with the value ``VALUE``
(compared as text, so ``tier=1`` matches the number 1 and the string "1"), are of a kind the
files applied, and are not in the files, are deleted. A GVC-scoped kind is looked at only in
the GVCs the run touched (the GVCs of its documents, and the GVCs it applied), the way
``kubectl apply --prune`` keeps to its namespaces; built-in items are never pruned.

Those items are listed first (``would prune`` with ``--dry-run``, which stops there); then,
unless ``--yes``, the user is asked on the terminal, and a run whose standard input is not a
terminal stops with an error rather than delete anything unasked. They are deleted in the
order ``plan.reverse_plan`` gives (what links to an item goes before it).

This module finds the items; ``apply_run.run_prune`` lists, confirms and deletes them.
"""

from __future__ import annotations

from typing import Any

from plinth.cli.errors import CliError
from plinth.cli.kindnames import gvc_scoped
from plinth.cli.manifests import Document
from plinth.cli.rest_run import collect_pages
from plinth.client import ApiClient
from plinth.client.jsvalues import js_string
from plinth.meta import collection_href


def parse_selector(text: str) -> tuple[str, str]:
    """``TAG=VALUE`` -> ``(TAG, VALUE)``; the value may be empty, the tag may not."""
    tag, sep, value = text.partition("=")
    if not sep or not tag:
        raise CliError(f"--selector '{text}' must be TAG=VALUE")
    return tag, value


def carries(item: Any, tag: str, value: str) -> bool:
    tags = item.get("tags") if isinstance(item, dict) else None
    if not isinstance(tags, dict) or tag not in tags:
        return False
    held = tags[tag]
    return (held if isinstance(held, str) else js_string(held)) == value


def prune_candidates(client: ApiClient, documents: list[Document], org: str, tag: str, value: str) -> list[Document]:
    """The items to prune, as documents read from the server (see the module docstring)."""
    kept = {document.href for document in documents}
    gvcs = sorted({d.gvc for d in documents if d.gvc} | {d.name for d in documents if d.kind == "gvc"})
    found: list[Document] = []
    for kind in sorted({document.kind for document in documents}):
        for gvc in gvcs if gvc_scoped(kind) else [None]:
            listed = client.request("GET", collection_href(org, kind, gvc)).json()
            listed, _ = collect_pages(client, listed, 0, [])
            for item in listed.get("items") or [] if isinstance(listed, dict) else []:
                if not carries(item, tag, value) or item.get("origin") == "builtin":
                    continue
                document = Document("<server>", 0, item, kind, str(item.get("name")), org, gvc)
                if document.href not in kept:
                    found.append(document)
    return found
