"""The data plane: how users reach running replicas (docs/runtime.md, "The data plane").

It runs inside the runtime controller process, which owns the engine driver, and serves each
deployment's ``status.remote``: the replica listing and the exec sessions of the official CLI
(``get-replicas``, ``replica get``, ``exec``, ``connect``, ``run``, ``cp``, ``cron run -i``)
and of cpln-py, and the CLI's ``port-forward`` (``portforward``, with its ``tickets``).
``server`` is the HTTP/websocket server (h11 and wsproto), ``websocket`` its frame-by-frame
socket, ``session`` one exec session and ``request`` its first message, ``access`` the API it
asks about every caller (it trusts no token itself), ``replicas`` the engine look-ups and
``tarcount`` a ``cp`` upload's progress.
"""

from __future__ import annotations

from plinth.runtime.dataplane.server import DataPlane

__all__ = ["DataPlane"]
