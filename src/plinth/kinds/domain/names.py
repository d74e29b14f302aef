"""What a domain's name (its FQDN) may be, and the facts other domain rules derive from it.

Decisions where the sources are silent:

- Names are stored lowercase and without a trailing dot. An upper-case or dot-terminated
  name is rejected with a message saying so, rather than silently rewritten, because the
  name is also the item's path key and a rewrite would answer under a different URL.
- "Apex" means exactly two labels (``example.com``). There is no public-suffix list here,
  so ``example.co.uk`` counts as a subdomain of ``co.uk``; a user with such a name can
  still use ``cname`` mode, which every name allows.
- The top-level label must contain a letter, so IPv4 addresses are not domain names.
- ``.internal`` domains are names whose top-level label is ``internal``.
"""

from __future__ import annotations

import re

NAME_MAX = 253
LABEL_MAX = 63
_LABEL = re.compile(r"^[a-z0-9](?:[a-z0-9-]*[a-z0-9])?$")
INTERNAL_TLD = "internal"


def domain_name_rule(name: str) -> str | None:
    """The message for the first thing wrong with ``name``, or ``None`` when it is a valid FQDN."""
    if name != name.lower():
        return "must be lowercase (domain names are stored in lower case)"
    if name.endswith("."):
        return "must not end with '.' (write the name without the root dot)"
    if len(name) > NAME_MAX:
        return f"must be at most {NAME_MAX} characters"
    labels = name.split(".")
    if len(labels) < 2:
        return "must be a DNS name with a top-level domain, e.g. example.com"
    for label in labels:
        if not label:
            return "must not contain empty labels ('..' or a leading '.')"
        if len(label) > LABEL_MAX:
            return f"labels must be at most {LABEL_MAX} characters ({label[:16]}... is {len(label)})"
        if not _LABEL.fullmatch(label):
            return f"label {label!r} may contain only a-z, 0-9 and '-', and must not start or end with '-'"
    if labels[-1].isdigit():
        return "the top-level domain must contain a letter"
    return None


def is_apex(name: str) -> bool:
    """``example.com`` is an apex; ``app.example.com`` is not (see the module docstring)."""
    return name.count(".") == 1


def apex_of(name: str) -> str:
    """The registrable part of ``name``: its last two labels."""
    return ".".join(name.split(".")[-2:])


def is_internal(name: str) -> bool:
    return name.rsplit(".", 1)[-1] == INTERNAL_TLD
