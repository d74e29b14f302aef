"""The documents of ``plinth apply -f`` / ``plinth delete -f``: read, checked, placed in an org and GVC.

Reading (``-f`` is repeatable):

- ``-`` is standard input; a directory is read in name order, its ``*.yaml``, ``*.yml`` and
  ``*.json`` files only (not recursively); any other path is one file;
- a file holds one or more YAML or JSON documents (``---`` between them), read as
  ``plinth rest`` reads a body (``body.load_documents``); empty documents are skipped but
  counted, so ``stack.yaml#3`` is the third document of the file whatever precedes it;
- a ``kind: list`` document (what ``plinth get -o yaml`` prints for a list) stands for its
  ``items``, as the official CLI's apply reads it.

Every document must be an object with a ``kind`` and a ``name``; ``kind`` may be an alias
(``vs``, ``workloads``). GVC-scoped kinds are placed in the document's own ``gvc``, else in
``--gvc``, else in the profile's GVC; a document naming another GVC than an explicit ``--gvc``
is an error, as is the same item twice. All of this is checked before anything is written.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from plinth.cli.body import load_documents, read_text
from plinth.cli.errors import InputError
from plinth.cli.kindnames import canonical_kind, gvc_scoped
from plinth.meta import collection_href, item_href

MANIFEST_SUFFIXES = (".yaml", ".yml", ".json")


@dataclass(frozen=True, slots=True)
class Document:
    """One item of the files: where it was read, its body as written, and where it lives."""

    source: str
    index: int  # 1-based position in its file
    body: dict[str, Any]
    kind: str
    name: str
    org: str
    gvc: str | None

    @property
    def where(self) -> str:
        """``stack.yaml#3``: how messages name the document."""
        return f"{self.source}#{self.index}"

    @property
    def href(self) -> str:
        return item_href(self.org, self.kind, self.name, self.gvc)

    @property
    def collection(self) -> str:
        return collection_href(self.org, self.kind, self.gvc)

    @property
    def label(self) -> str:
        """The item's path below its org (``gvc/prod/workload/web``; an org is ``org/acme``), as
        the output names it."""
        if self.kind == "org":
            return f"org/{self.name}"
        return self.href.removeprefix(f"/org/{self.org}/")


@dataclass(frozen=True, slots=True)
class Placement:
    """Where documents that leave it out go: the org, and the GVC (``gvc_flag``: ``--gvc`` as given)."""

    org: str
    gvc: str | None
    gvc_flag: str | None


def manifest_files(paths: tuple[str, ...]) -> list[str]:
    """The files ``-f`` names, directories expanded in name order."""
    files: list[str] = []
    for path in paths:
        folder = Path(path).expanduser()
        if path != "-" and folder.is_dir():
            found = sorted(p for p in folder.iterdir() if p.is_file() and p.suffix.lower() in MANIFEST_SUFFIXES)
            files += [str(p) for p in found]
        else:
            files.append(path)
    return files


def read_documents(paths: tuple[str, ...], stdin: IO[str], place: Placement) -> list[Document]:
    """Every document of ``paths``, checked and placed (see the module docstring)."""
    documents: list[Document] = []
    seen: dict[str, Document] = {}
    for path in manifest_files(paths):
        source = "<stdin>" if path == "-" else path
        for position, raw in enumerate(load_documents(read_text(path, stdin), source), start=1):
            if raw is None:
                continue
            bodies = raw.get("items") if isinstance(raw, dict) and raw.get("kind") == "list" else [raw]
            for body in bodies if isinstance(bodies, list) else [bodies]:
                document = _document(source, position, body, place)
                if document.href in seen:
                    raise InputError(f"{document.where}: {document.label} is also {seen[document.href].where}")
                seen[document.href] = document
                documents.append(document)
    return documents


def _document(source: str, index: int, body: Any, place: Placement) -> Document:
    where = f"{source}#{index}"
    if not isinstance(body, dict):
        raise InputError(f"{where}: a document must be an object with a kind and a name")
    kind_name, name = body.get("kind"), body.get("name")
    if not isinstance(kind_name, str) or not kind_name:
        raise InputError(f'{where}: the document has no "kind"')
    if not isinstance(name, str) or not name:
        raise InputError(f'{where}: the {kind_name} has no "name"')
    kind = canonical_kind(kind_name) or kind_name
    if kind != kind_name:
        body = {**body, "kind": kind}
    gvc = None
    if gvc_scoped(kind):
        own = body.get("gvc")
        if isinstance(own, str) and own and place.gvc_flag and own != place.gvc_flag:
            raise InputError(f"{where}: the {kind} '{name}' names GVC '{own}', not '{place.gvc_flag}' given by --gvc")
        gvc = own if isinstance(own, str) and own else place.gvc
        if not gvc:
            raise InputError(f"{where}: the {kind} '{name}' names no GVC: add 'gvc:' or give --gvc")
    return Document(source, index, body, kind, name, name if kind == "org" else place.org, gvc)
