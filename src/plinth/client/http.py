"""The thin API client: one request in, one :class:`Response` out, or an error.

Built on the standard library's ``http.client`` on purpose: ``httpx`` or ``requests`` alone
cost 150-190 ms to import, more than a whole ``plinth rest get`` may take (issue 4).

Contract of :meth:`ApiClient.request`:

- returns the :class:`Response` for any 2xx status;
- raises an :class:`plinth.errors.APIError` subclass (built by ``error_from_response``) for
  any other status, after the retries the :class:`RetryPolicy` allows;
- raises :class:`TransportError` when no answer arrived (refused, reset, timeout, TLS).

Observers (``on_request`` / ``on_response``) see every attempt; the ``--debug`` transcript
hangs off them. The connection is kept alive between calls to the same host, so ``create``
(POST then GET) opens one socket.
"""

from __future__ import annotations

import http.client
import socket
import ssl
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote, urlsplit

from plinth.client.errors import Response, TransportError, error_from_response
from plinth.client.retry import RetryPolicy

DEFAULT_ACCEPT = "application/json, text/plain, */*"


@dataclass(slots=True)
class PreparedRequest:
    """A request as it will go on the wire; ``path`` is what the user asked for, ``url`` the target."""

    method: str
    url: str
    path: str
    headers: list[tuple[str, str]]
    body: bytes | None = None
    json_body: Any = None
    attempt: int = 1
    #: whether observers (the --debug transcript) see this request; discovery is not shown
    notify: bool = True


RequestObserver = Callable[[PreparedRequest], None]
ResponseObserver = Callable[[PreparedRequest, Response], None]


def join_url(endpoint: str, path: str) -> str:
    """The official CLI's URL rule (CLI rest/client.js): full URLs win, ``//host`` is scheme-relative,
    otherwise endpoint (minus a trailing ``/``) + path (plus a leading ``/``)."""
    if path.startswith(("http://", "https://")):
        url = path
    elif path.startswith("//"):
        url = urlsplit(endpoint).scheme + ":" + path
    else:
        url = endpoint.rstrip("/") + (path if path.startswith("/") else "/" + path)
    # Keep what is already escaped (%2F stays), escape only what cannot travel (spaces, ...).
    return quote(url, safe=":/?#[]@!$&'()*+,;=%~")


@dataclass
class ApiClient:
    """Sends requests to one endpoint with one token; see the module docstring for the contract."""

    endpoint: str
    token: str | None = None
    insecure: bool = False
    timeout: float | None = 30.0
    user_agent: str = "plinth-cli"
    session_id: str = field(default_factory=lambda: str(uuid.uuid4()))
    retry: RetryPolicy = field(default_factory=RetryPolicy)
    sleep: Callable[[float], None] = time.sleep
    on_request: list[RequestObserver] = field(default_factory=list)
    on_response: list[ResponseObserver] = field(default_factory=list)
    _connections: dict[tuple[str, str, int], http.client.HTTPConnection] = field(default_factory=dict)

    def base_headers(self, authenticated: bool = True) -> list[tuple[str, str]]:
        headers = [("Accept", DEFAULT_ACCEPT), ("User-Agent", self.user_agent)]
        if authenticated:
            headers.append(("x-cpln-session", self.session_id))
            if self.token:
                token = self.token if self.token.startswith("Bearer ") else f"Bearer {self.token}"
                headers.append(("Authorization", token))
        return headers

    def prepare(
        self,
        method: str,
        path: str,
        json_body: Any = None,
        extra_headers: list[tuple[str, str]] | None = None,
        authenticated: bool = True,
        base: str | None = None,
    ) -> PreparedRequest:
        """Build the request; ``extra_headers`` (``-H``) replace built-ins of the same name."""
        from plinth.client.jsvalues import stringify

        headers = self.base_headers(authenticated)
        body = None
        if json_body is not None:
            body = stringify(json_body).encode("utf-8")
            headers.append(("Content-Type", "application/json"))
        for name, value in extra_headers or []:
            headers = [(k, v) for k, v in headers if k.lower() != name.lower()]
            headers.append((name, value))
        url = join_url(base or self.endpoint, path)
        return PreparedRequest(method.upper(), url, path, headers, body, json_body)

    def request(
        self,
        method: str,
        path: str,
        json_body: Any = None,
        extra_headers: list[tuple[str, str]] | None = None,
        authenticated: bool = True,
        base: str | None = None,
        notify: bool = True,
    ) -> Response:
        prepared = self.prepare(method, path, json_body, extra_headers, authenticated, base)
        prepared.notify = notify
        return self.send(prepared)

    def send(self, prepared: PreparedRequest) -> Response:
        """Send with retries; raise as the module docstring says."""
        slept = 0.0
        attempt = 1
        while True:
            prepared.attempt = attempt
            try:
                response = self._send_once(prepared)
            except TransportError as failure:
                failure.attempts = attempt
                wait = self.retry.delay(attempt)
                if (
                    attempt >= self.retry.attempts
                    or not self.retry.should_retry_transport(prepared.method, failure.code)
                    or slept + wait > self.retry.budget
                ):
                    raise
            else:
                if 200 <= response.status < 300:
                    return response
                wait = self.retry.delay(attempt, response.header("Retry-After"))
                if (
                    attempt >= self.retry.attempts
                    or not self.retry.should_retry_status(prepared.method, response.status)
                    or slept + wait > self.retry.budget
                ):
                    raise error_from_response(response)
            self.sleep(wait)
            slept += wait
            attempt += 1

    def close(self) -> None:
        for connection in self._connections.values():
            connection.close()
        self._connections.clear()

    def _connection(self, url: str) -> tuple[http.client.HTTPConnection, str]:
        key, target = _address(url)
        connection = self._connections.get(key)
        if connection is None:
            connection = self._connections[key] = self._connect(key)
        return connection, target

    def _connect(self, key: tuple[str, str, int]) -> http.client.HTTPConnection:
        scheme, host, port = key
        if scheme == "https":
            context = ssl.create_default_context()
            if self.insecure:
                context.check_hostname = False
                context.verify_mode = ssl.CERT_NONE
            return http.client.HTTPSConnection(host, port, timeout=self.timeout, context=context)
        return http.client.HTTPConnection(host, port, timeout=self.timeout)

    def stream_lines(self, prepared: PreparedRequest) -> Iterator[bytes]:
        """Send once on a connection of its own and yield the answer's body line by line as it
        arrives (a watch); a non-2xx answer raises as :meth:`send` does, without retries, and a
        lost connection raises :class:`TransportError` (the caller decides whether to resume)."""
        for observer in self.on_request if prepared.notify else []:
            observer(prepared)
        key, target = _address(prepared.url)
        connection = self._connect(key)
        try:
            try:
                connection.putrequest(prepared.method, target, skip_accept_encoding=True)
                for name, value in prepared.headers:
                    connection.putheader(name, value)
                if prepared.body is not None:
                    connection.putheader("Content-Length", str(len(prepared.body)))
                connection.endheaders(prepared.body)
                raw = connection.getresponse()
                if not 200 <= raw.status < 300:
                    headers = [(k.lower(), v) for k, v in raw.getheaders()]
                    raise error_from_response(Response(raw.status, raw.reason, headers, raw.read(), prepared.url))
                while line := raw.readline():
                    yield line
            except (OSError, http.client.HTTPException) as error:
                raise _transport_error(error, prepared.url) from error
        finally:
            connection.close()

    def _send_once(self, prepared: PreparedRequest) -> Response:
        for observer in self.on_request if prepared.notify else []:
            observer(prepared)
        started = time.monotonic()
        response = self._exchange(prepared, reuse_ok=True)
        response = Response(
            response.status, response.reason, response.headers, response.body, prepared.url, time.monotonic() - started
        )
        for response_observer in self.on_response if prepared.notify else []:
            response_observer(prepared, response)
        return response

    def _exchange(self, prepared: PreparedRequest, reuse_ok: bool) -> Response:
        connection, target = self._connection(prepared.url)
        reused = connection.sock is not None
        try:
            connection.putrequest(prepared.method, target, skip_accept_encoding=True)
            for name, value in prepared.headers:
                connection.putheader(name, value)
            if prepared.body is not None or prepared.method in ("POST", "PUT", "PATCH"):
                connection.putheader("Content-Length", str(len(prepared.body or b"")))
            connection.endheaders(prepared.body)
            raw = connection.getresponse()
            body = raw.read()
        except (http.client.RemoteDisconnected, BrokenPipeError, ConnectionResetError) as error:
            connection.close()
            if reused and reuse_ok:
                # A kept-alive socket the server had already closed: one fresh try is always safe.
                return self._exchange(prepared, reuse_ok=False)
            raise _transport_error(error, prepared.url) from error
        except (OSError, http.client.HTTPException) as error:
            connection.close()
            raise _transport_error(error, prepared.url) from error
        headers = [(k.lower(), v) for k, v in raw.getheaders()]
        if raw.getheader("Content-Encoding", "").lower() in ("gzip", "deflate"):
            import zlib

            body = zlib.decompress(body, 47)  # 47: auto-detect gzip or zlib wrapping
        if raw.will_close:
            connection.close()
        return Response(raw.status, raw.reason, headers, body, prepared.url)


def _address(url: str) -> tuple[tuple[str, str, int], str]:
    """The connection key (scheme, host, port) of ``url`` and the request target on it."""
    parts = urlsplit(url)
    scheme = parts.scheme or "http"
    host = parts.hostname or "127.0.0.1"
    port = parts.port or (443 if scheme == "https" else 80)
    target = parts.path or "/"
    if parts.query:
        target += "?" + parts.query
    return (scheme, host, port), target


_TLS_CODES = {
    18: ("DEPTH_ZERO_SELF_SIGNED_CERT", "self-signed certificate"),
    19: ("SELF_SIGNED_CERT_IN_CHAIN", "self-signed certificate in certificate chain"),
    20: ("UNABLE_TO_GET_ISSUER_CERT_LOCALLY", "unable to get local issuer certificate"),
    21: ("UNABLE_TO_VERIFY_LEAF_SIGNATURE", "unable to verify the first certificate"),
    10: ("CERT_HAS_EXPIRED", "certificate has expired"),
    62: ("ERR_TLS_CERT_ALTNAME_INVALID", "Hostname/IP does not match certificate's altnames"),
}


def _transport_error(error: BaseException, url: str) -> TransportError:
    """Name a transport failure the way Node does, so the printed error matches the official CLI's."""
    parts = urlsplit(url)
    where = f"{parts.hostname}:{parts.port or (443 if parts.scheme == 'https' else 80)}"
    if isinstance(error, ssl.SSLCertVerificationError):
        code, message = _TLS_CODES.get(error.verify_code, ("CERT_VERIFY_FAILED", error.verify_message))
        return TransportError(code, message)
    if isinstance(error, ssl.SSLError):
        return TransportError("EPROTO", str(error))
    if isinstance(error, ConnectionRefusedError):
        return TransportError("ECONNREFUSED", f"connect ECONNREFUSED {where}")
    if isinstance(error, ConnectionResetError | http.client.RemoteDisconnected | BrokenPipeError):
        return TransportError("ECONNRESET", "socket hang up")
    if isinstance(error, TimeoutError | socket.timeout):
        return TransportError("ETIMEDOUT", f"timeout of {where} exceeded")
    if isinstance(error, socket.gaierror):
        return TransportError("ENOTFOUND", f"getaddrinfo ENOTFOUND {parts.hostname}")
    return TransportError("ERR_NETWORK", str(error) or type(error).__name__)
