"""What the benchmark stores: the item kind under test, its names, bodies and paths.

The issue measures domains; ``gvc`` is kept as a fallback kind for trees without the domain
kind (and to compare a second kind's costs).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

DOMAIN_SPEC: dict[str, Any] = {
    "dnsMode": "cname",
    "ports": [
        {"number": 443, "protocol": "http2", "routes": [{"prefix": "/", "workloadLink": "//gvc/main/workload/w"}]}
    ],
}


@dataclass(frozen=True)
class ItemKind:
    """An org-scoped kind whose items the benchmark creates, reads, lists and patches."""

    name: str

    def item_name(self, index: int) -> str:
        """Zero-padded so keyset order is creation order (page N holds items 50(N-1)..)."""
        if self.name == "domain":
            return f"d{index:06d}.bench.example.com"
        return f"g{index:06d}"

    def body(self, index: int) -> dict[str, Any]:
        spec: dict[str, Any] = DOMAIN_SPEC if self.name == "domain" else {}
        return {"name": self.item_name(index), "spec": spec}

    def collection_path(self, org: str) -> str:
        return f"/org/{org}/{self.name}"

    def item_path(self, org: str, index: int) -> str:
        return f"{self.collection_path(org)}/{self.item_name(index)}"


KINDS = ("domain", "gvc")
