"""The few plain HTTP requests around the load runs: setup, recording a response, cursor walks."""

from __future__ import annotations

import time
from dataclasses import dataclass

import httpx


@dataclass(frozen=True)
class Recorded:
    status: int
    headers: list[tuple[str, str]]
    body: bytes


def client(base_url: str, key: str) -> httpx.Client:
    return httpx.Client(base_url=base_url, headers={"Authorization": f"Bearer {key}"}, timeout=30)


def ensure_created(api: httpx.Client, path: str, body: dict[str, object]) -> None:
    """POST ``body``; 201, or 409 when an earlier phase created it, is fine."""
    reply = api.post(path, json=body)
    if reply.status_code not in (201, 409):
        raise RuntimeError(f"POST {path} answered {reply.status_code}: {reply.text[:500]}")


def lift_quotas(api: httpx.Client, org: str) -> None:
    """Raise every quota of ``org`` to the highest ``max``: a bench creates far more items than
    the default quotas allow, and measures writes, not 429s."""
    listed = api.get(f"/org/{org}/quota", params={"limit": 1000})
    listed.raise_for_status()
    for quota in listed.json()["items"]:
        api.patch(f"/org/{org}/quota/{quota['id']}", json={"max": QUOTA_CEILING}).raise_for_status()


#: The highest ``max`` a quota takes (``plinth.kinds.quota.MAX_LIMIT``).
QUOTA_CEILING = 1_000_000


def record(api: httpx.Client, path: str) -> Recorded:
    """The exact response to GET ``path`` (headers in wire order), for the ceiling."""
    reply = api.get(path)
    if reply.status_code != 200:
        raise RuntimeError(f"GET {path} answered {reply.status_code}: {reply.text[:500]}")
    headers = [(k.decode("latin-1"), v.decode("latin-1")) for k, v in reply.headers.raw]
    return Recorded(reply.status_code, headers, reply.content)


class WalkTooSlow(Exception):
    """Following ``next`` links to the wanted page took longer than allowed."""


def page_url(api: httpx.Client, first: str, page: int, deadline_s: float) -> str:
    """The URL of list page ``page`` (1-based), reached by following ``next`` links from ``first``.

    Raises :class:`WalkTooSlow` after ``deadline_s``: a server whose pages get slower with
    depth must not stretch the run without bound."""
    url = first
    began = time.monotonic()
    for seen in range(1, page):
        if time.monotonic() - began > deadline_s:
            raise WalkTooSlow(f"reached only page {seen} of {page} in {deadline_s:.0f} s")
        reply = api.get(url)
        if reply.status_code != 200:
            raise RuntimeError(f"GET {url} answered {reply.status_code}: {reply.text[:500]}")
        nxt = [link["href"] for link in reply.json().get("links", []) if link.get("rel") == "next"]
        if not nxt:
            raise RuntimeError(f"the list ended after {seen} pages; page {page} does not exist")
        url = nxt[0]
    return url
