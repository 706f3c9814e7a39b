"""JSON over HTTP POST (stdlib only): one retry rule, backoff with jitter, ``Retry-After``, errors that say what failed."""

from __future__ import annotations

import contextlib
import errno
import json
import math
import random
import socket
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Literal
from urllib.parse import parse_qsl, urlsplit, urlunsplit

from engine.display import plural
from engine.errors import MemdeckError
from engine.textio import scrub_json

MAX_RETRY_AFTER = 30.0
"""The longest ``Retry-After`` we wait (seconds): a server asking for minutes gets a clear failure sooner."""
MAX_ANSWER_BYTES = 256 * 1024 * 1024
"""The longest answer read (a batch of 2,048 embeddings of 3,072 numbers is ~130 MB as JSON): a server that
streams without end gets a clear failure, not all of memory."""
DETAIL_CHARS = 300
_BODY_BYTES = 8000
_PLAIN_HEADERS = frozenset({"content-type", "accept", "user-agent", "content-length"})

FailureKind = Literal["status", "refused", "dns", "tls", "timeout", "network", "json", "config", "size"]


def public_url(url: str) -> str:
    """A URL safe to show and fingerprint: no user/password, query or fragment, no trailing slash."""
    parts = urlsplit(url.strip())
    host = parts.hostname or ""
    if ":" in host:
        host = f"[{host}]"
    if parts.port is not None:
        host = f"{host}:{parts.port}"
    return urlunsplit((parts.scheme, host, parts.path.rstrip("/"), "", ""))


class HttpError(MemdeckError):
    """A request failed for good (after retries when the failure was worth retrying).

    Attributes:
        kind: ``status`` (an HTTP error answer), ``refused``, ``dns``, ``tls``, ``timeout``, ``network``,
            ``json`` (a 2xx answer that is not JSON) or ``config`` (a bad URL or timeout; nothing was sent).
        endpoint: the address as shown (no credentials, query or fragment).
        problem: one line saying what went wrong, without the attempt count.
        status: the HTTP status for ``status``, else None.
        reason: the status's reason phrase (``Bad Request``).
        detail: an excerpt of the error body (the server's own message), secrets masked.
        attempts: requests made; ``retried`` says whether the failure was one that is retried.
        waited: seconds from the first request to giving up (None for a failure that is not retried).
    """

    def __init__(self, kind: FailureKind, endpoint: str, problem: str, *, status: int | None = None,
                 reason: str = "", detail: str = "", attempts: int = 1, retried: bool = False,
                 waited: float | None = None) -> None:
        self.kind: FailureKind = kind
        self.endpoint = endpoint
        self.problem = problem
        self.status = status
        self.reason = reason
        self.detail = detail
        self.attempts = attempts
        self.retried = retried
        self.waited = waited
        super().__init__(self.explain())

    @property
    def message(self) -> str:
        """The whole line: the problem and, for a retried failure, how many attempts were made (and how long
        it took, once that is a wait worth naming)."""
        return self.explain()

    def explain(self, problem: str | None = None, hint: str = "") -> str:
        """The message with ``problem`` in place of the default one and ``hint`` after it (before the count)."""
        text = self.problem if problem is None else problem
        if hint:
            text = f"{text}: {hint}"
        if self.retried:
            took = f", {self.waited:.1f} s" if self.waited is not None and self.waited >= 1.0 else ""
            text += f" (gave up after {plural(self.attempts, 'attempt')}{took})"
        return text

    def asking(self, seconds: float) -> HttpError:
        """This failure, saying the server asked to wait ``seconds`` (its ``Retry-After``) before trying again."""
        problem = f"{self.problem}; the server asks to wait {_duration(seconds)} (Retry-After): try again then"
        return HttpError(self.kind, self.endpoint, problem, status=self.status, reason=self.reason,
                         detail=self.detail, attempts=self.attempts, retried=self.retried, waited=self.waited)

    def gave_up(self, attempts: int, waited: float) -> HttpError:
        """This failure as the final one of a call: ``attempts`` requests over ``waited`` seconds."""
        return HttpError(self.kind, self.endpoint, self.problem, status=self.status, reason=self.reason,
                         detail=self.detail, attempts=attempts, retried=self.retried, waited=waited)


def _duration(seconds: float) -> str:
    """``45 s``, ``12 min``, ``2 h 5 min`` (a wait a server asks for)."""
    if seconds < 90:
        return f"{seconds:.0f} s"
    minutes = round(seconds / 60)
    if minutes < 90:
        return f"{minutes} min"
    if minutes < 48 * 60:
        return f"{minutes // 60} h" + (f" {minutes % 60} min" if minutes % 60 else "")
    return plural(round(minutes / (24 * 60)), "day", grouped=True)


@dataclass(frozen=True)
class Response:
    """What a transport returns for any answer, error statuses included; ``headers`` keys are lower-case."""

    status: int
    reason: str
    headers: Mapping[str, str]
    body: bytes


Transport = Callable[[str, bytes, Mapping[str, str], float], Response]
"""``(url, body, headers, timeout) → Response``; raises ``OSError`` (or ``http.client.HTTPException``) when no
answer arrives. Tests inject one; the default is :func:`urllib_transport`."""


class AnswerTooLarge(Exception):
    """The answer's body was longer than :data:`MAX_ANSWER_BYTES` (the transport stopped reading)."""


class _Watchdog:
    """Cuts an attempt's connections once its time is up, so no answer can take longer than the timeout.

    A socket timeout bounds each read, not the answer: a server that sends a byte a second (headers or body)
    never trips it. Shutting the socket down wakes the blocked read at once.
    """

    def __init__(self, seconds: float) -> None:
        self.expired = False
        self._sockets: list[socket.socket] = []
        self._lock = threading.Lock()
        self._timer = threading.Timer(seconds, self._expire)
        self._timer.daemon = True

    def watch(self, sock: socket.socket) -> None:
        with self._lock:
            self._sockets.append(sock)
            if self.expired:
                _shut(sock)

    def _expire(self) -> None:
        with self._lock:
            self.expired = True
            for sock in self._sockets:
                _shut(sock)

    def __enter__(self) -> _Watchdog:
        self._timer.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._timer.cancel()


def _shut(sock: socket.socket) -> None:
    with contextlib.suppress(OSError):
        sock.shutdown(socket.SHUT_RDWR)


def _opener(watchdog: _Watchdog) -> Any:
    """``urllib``'s usual opener (proxies from the environment, TLS), with each connection's socket watched."""
    import urllib.request

    class Watched:
        def do_open(self, http_class: Any, req: Any, **kwargs: Any) -> Any:
            class Connection(http_class):  # type: ignore[misc]
                def connect(self) -> None:
                    super().connect()
                    watchdog.watch(self.sock)

            return super().do_open(Connection, req, **kwargs)  # type: ignore[misc]

    class HTTP(Watched, urllib.request.HTTPHandler):
        pass

    class HTTPS(Watched, urllib.request.HTTPSHandler):
        pass

    return urllib.request.build_opener(HTTP(), HTTPS())


def _read_body(answer: Any, limit: int) -> bytes:
    parts: list[bytes] = []
    size = 0
    while chunk := answer.read(65536):
        size += len(chunk)
        if size > limit:
            raise AnswerTooLarge(f"more than {limit // (1024 * 1024)} MB")
        parts.append(chunk)
    return b"".join(parts)


def urllib_transport(url: str, body: bytes, headers: Mapping[str, str], timeout: float) -> Response:
    """POST with ``urllib.request``; HTTP error statuses are returned as responses, not raised.

    The whole answer (connecting, headers, body) must arrive within ``timeout`` seconds, else ``TimeoutError``;
    a body over :data:`MAX_ANSWER_BYTES` raises :class:`AnswerTooLarge`.
    """
    import urllib.error  # deferred: urllib.request pulls in http.client, email and ssl
    import urllib.request

    request = urllib.request.Request(url, data=body, headers=dict(headers), method="POST")
    import http.client

    with _Watchdog(timeout) as watchdog:
        try:
            answer = _attempt(_opener(watchdog), request, timeout)
        except (OSError, ValueError, http.client.HTTPException, urllib.error.URLError):
            if watchdog.expired:  # the cut connection's error, whatever it was: the time was up
                raise TimeoutError(f"the answer took longer than {timeout:g} s") from None
            raise
        if watchdog.expired:  # cut mid-body: what arrived is not the whole answer
            raise TimeoutError(f"the answer took longer than {timeout:g} s")
        return answer


def _attempt(opener: Any, request: Any, timeout: float) -> Response:
    import urllib.error

    try:
        with opener.open(request, timeout=timeout) as answer:
            raw = _read_body(answer, MAX_ANSWER_BYTES)
            return Response(int(answer.status), str(answer.reason or ""),
                            {k.lower(): v for k, v in answer.headers.items()}, raw)
    except urllib.error.HTTPError as exc:
        try:
            raw = exc.read(_BODY_BYTES)
        except (OSError, ValueError):
            raw = b""
        finally:
            exc.close()
        found = {k.lower(): v for k, v in exc.headers.items()} if exc.headers else {}
        return Response(int(exc.code), str(exc.reason or ""), found, raw)


def is_retryable_status(status: int) -> bool:
    """The one rule: rate limiting (429) and every server error (5xx) are worth another try."""
    return status == 429 or 500 <= status <= 599


def parse_retry_after(value: str | None, *, now: float | None = None, cap: float = MAX_RETRY_AFTER) -> float | None:
    """Seconds to wait from a ``Retry-After`` header: a number of seconds or an HTTP date, between 0 and ``cap``.

    Returns None when the header is missing or unreadable (the caller then backs off as usual).
    """
    if value is None or not value.strip():
        return None
    text = value.strip()
    try:
        seconds = float(text)
    except ValueError:
        from email.utils import parsedate_to_datetime  # deferred: only for a date-valued header

        try:
            when = parsedate_to_datetime(text)
        except (TypeError, ValueError, IndexError):
            return None
        if when.tzinfo is None:  # RFC 9110 dates are GMT; a zone-less one is read as such
            from datetime import UTC

            when = when.replace(tzinfo=UTC)
        seconds = when.timestamp() - (time.time() if now is None else now)
    if not math.isfinite(seconds):
        return None
    return min(max(seconds, 0.0), cap)


def validate_timeout(timeout: object) -> float:
    """The timeout as a float; a clear :class:`HttpError` (``config``) for anything but a positive finite number.

    ``socket`` would otherwise fail mid-request with ``ValueError: Timeout value out of range`` (negative),
    never time out (infinite) or switch to non-blocking mode (zero).
    """
    if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or not math.isfinite(timeout) \
            or timeout <= 0:
        raise HttpError("config", "", f"the timeout must be a positive number of seconds, got {timeout!r}")
    return float(timeout)


def error_detail(raw: bytes) -> str:
    """The server's own error message from an error body (JSON ``error.message`` and the like, else the text)."""
    text = raw[:_BODY_BYTES].decode("utf-8", errors="replace").strip()
    try:
        data = scrub_json(json.loads(text))  # "\ud800" in the server's message: no lone surrogate is shown
    except (ValueError, RecursionError):
        data = None
    if isinstance(data, dict):
        err = data.get("error", data)
        if isinstance(err, dict):
            text = str(err.get("message") or err.get("status") or "")
        elif isinstance(err, str):
            text = err
        elif isinstance(data.get("message"), str):
            text = data["message"]
        else:
            text = ""
    elif data is not None:
        text = ""
    text = " ".join(text.split())
    return text[:DETAIL_CHARS] + ("…" if len(text) > DETAIL_CHARS else "")


def decode_json_body(body: bytes) -> Any:
    """A server's JSON answer, safe to use: bytes that are not UTF-8 become U+FFFD (the rest of the answer is
    kept, as files are read), and so does a lone surrogate from a ``"\\ud83d"`` escape (:func:`scrub_json`).

    Raises:
        ValueError: the body is not JSON.
    """
    try:
        value = json.loads(body)  # UTF-8, UTF-16 or UTF-32, BOM or not
    except UnicodeDecodeError:
        value = json.loads(body.decode("utf-8", errors="replace"))
    return scrub_json(value)


def _secrets_of(url: str, headers: Mapping[str, str]) -> list[str]:
    """What a request carries that may be secret (header values, a URL's password and query values), longest first."""
    found: set[str] = set()
    parts = urlsplit(url)
    if parts.password:
        found.add(parts.password)
    found.update(value for _key, value in parse_qsl(parts.query))
    for name, value in headers.items():
        if name.lower() in _PLAIN_HEADERS or not value:
            continue
        found.add(value)
        scheme, _, token = value.partition(" ")
        if token and scheme.lower() in ("bearer", "basic", "token"):
            found.add(token)
    return sorted((s for s in found if len(s) >= 6), key=len, reverse=True)


def redact(text: str, secrets: Iterable[str]) -> str:
    """``text`` with every secret replaced by ``***``."""
    for secret in secrets:
        if secret and secret in text:
            text = text.replace(secret, "***")
    return text


def _is_refused(reason: object) -> bool:
    if isinstance(reason, ConnectionRefusedError):
        return True
    return isinstance(reason, OSError) and reason.errno == errno.ECONNREFUSED


@dataclass(frozen=True)
class RetryPolicy:
    """How often and how long to retry a failure worth retrying (429, 5xx, timeouts, broken connections).

    Attributes:
        retries: retries after the first attempt.
        backoff: the first delay in seconds; it doubles each retry up to ``max_backoff``.
        max_backoff: the longest delay between retries.
        jitter: each delay grows by a random share up to this (0.2 = up to 20 %), so clients spread out.
        max_retry_after: the longest ``Retry-After`` honoured.
        retry_refused: whether a refused connection is retried (a local server that is starting up) or fails
            at once (nothing listens there; waiting would only stall the caller).
        timeout_retries: retries after attempts that timed out (None: ``retries``). A timeout is the costly
            failure: the server may have accepted the request and be working on it (a paid LLM completion),
            and each attempt takes the whole timeout.
        deadline: seconds the whole call may take, waits included (None: no bound); a retry starts only when
            its delay plus one more full timeout still fit.
    """

    retries: int = 3
    backoff: float = 0.5
    max_backoff: float = 8.0
    jitter: float = 0.2
    max_retry_after: float = MAX_RETRY_AFTER
    retry_refused: bool = True
    timeout_retries: int | None = None
    deadline: float | None = None


class HttpClient:
    """Posts JSON and decodes the JSON answer, retrying what is worth retrying.

    Holds no URL or credentials: each call passes its endpoint and headers, so one client serves any caller.
    """

    def __init__(
        self,
        policy: RetryPolicy | None = None,
        *,
        sleep: Callable[[float], None] = time.sleep,
        rng: random.Random | None = None,
        transport: Transport | None = None,
        wall_clock: Callable[[], float] = time.time,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        """Configure the client.

        Args:
            policy: retries and backoff (defaults: 3 retries from 0.5 s, doubling to 8 s, 20 % jitter).
            sleep: waits between retries (tests pass a recorder).
            rng: jitter source.
            transport: sends one request (tests inject a fake); defaults to :func:`urllib_transport`.
            wall_clock: the current time, for ``Retry-After`` dates.
            clock: monotonic seconds, for the policy's deadline and the time an error reports (tests fake it).
        """
        self.policy = policy or RetryPolicy()
        self._sleep = sleep
        self._rng = rng or random.Random()
        self._transport = transport or urllib_transport
        self._wall_clock = wall_clock
        self._clock = clock

    def delay(self, attempt: int, retry_after: float | None = None) -> float:
        """Seconds before retry number ``attempt + 1``: the server's ``Retry-After``, else backoff plus jitter."""
        if retry_after is not None:
            return retry_after
        base = min(self.policy.backoff * float(1 << min(attempt, 30)), self.policy.max_backoff)
        return base * (1.0 + self._rng.uniform(0.0, max(self.policy.jitter, 0.0)))

    def post_json(
        self,
        url: str,
        payload: Any,
        *,
        timeout: float,
        headers: Mapping[str, str] | None = None,
        retries: int | None = None,
        label: str | None = None,
    ) -> Any:
        """POST ``payload`` as JSON to ``url`` and return the decoded JSON answer.

        Args:
            url: the endpoint (may hold credentials; they are never shown).
            payload: anything :func:`json.dumps` takes.
            timeout: seconds per attempt (positive and finite).
            headers: extra request headers (auth); their values are masked in error details.
            retries: overrides the policy's retries for this call (a person waiting wants fewer).
            label: how the endpoint is named in errors; defaults to :func:`public_url` of ``url``.

        Raises:
            HttpError: the request failed for good; ``kind`` and the fields say why.
        """
        try:
            parts = urlsplit(url.strip())
            valid = parts.scheme.lower() in ("http", "https") and bool(parts.hostname)
            _ = parts.port  # raises for a port that is not a number
        except ValueError:
            valid = False
        shown = label if label is not None else (public_url(url) if valid else "the configured address")
        if not valid:
            raise HttpError("config", shown, f"{shown} is not a valid http:// or https:// address")
        try:
            seconds = validate_timeout(timeout)
        except HttpError as exc:
            raise HttpError("config", shown, exc.problem) from None
        extra = dict(headers or {})
        secrets = _secrets_of(url, extra)
        sent = {"Content-Type": "application/json", "Accept": "application/json", "User-Agent": "memdeck", **extra}
        body = json.dumps(payload).encode("utf-8")
        allowed = max(0, self.policy.retries if retries is None else retries)
        failure: HttpError | None = None
        started = self._clock()
        timeouts = 0
        attempt = 0
        for attempt in range(allowed + 1):
            retry_after: float | None = None
            asked: float | None = None
            try:
                answer = self._transport(url, body, sent, seconds)
            except Exception as exc:  # classified below; anything unknown is re-raised there
                failure = self._connection_failure(exc, shown, seconds, attempt + 1)
                if not failure.retried:
                    raise failure from None
                timeouts += failure.kind == "timeout"
            else:
                if 200 <= answer.status < 300:
                    try:
                        return decode_json_body(answer.body)
                    except (ValueError, RecursionError):
                        raise HttpError("json", shown, f"{shown} did not answer with JSON",
                                        status=answer.status, reason=answer.reason) from None
                failure = self._status_failure(answer, shown, secrets, attempt + 1)
                if not failure.retried:
                    raise failure
                asked = parse_retry_after(answer.headers.get("retry-after"), now=self._wall_clock(), cap=math.inf)
                retry_after = None if asked is None else min(asked, self.policy.max_retry_after)
                if asked is not None and asked > self.policy.max_retry_after:
                    failure = failure.asking(asked)  # a wait longer than we keep: the failure says how long
            if attempt >= allowed:
                break
            delay = self.delay(attempt, retry_after)
            if not self._may_retry(timeouts, self._clock() - started, delay, seconds):
                if retry_after is not None and delay == retry_after and retry_after == asked:
                    failure = failure.asking(retry_after)  # the wait the server asks does not fit the deadline
                break
            self._sleep(delay)
        assert failure is not None  # the loop ran at least once and every success returned
        raise failure.gave_up(attempt + 1, self._clock() - started)

    def _may_retry(self, timeouts: int, elapsed: float, delay: float, timeout: float) -> bool:
        """Whether another attempt fits the policy: not past ``timeout_retries`` timed-out attempts, and its
        delay and a full ``timeout`` within the ``deadline``."""
        limit = self.policy.timeout_retries
        if limit is not None and timeouts > max(0, limit):
            return False
        deadline = self.policy.deadline
        return deadline is None or elapsed + delay + timeout <= deadline

    def _status_failure(self, answer: Response, shown: str, secrets: list[str], attempts: int) -> HttpError:
        detail = redact(error_detail(answer.body), secrets)
        status, reason = answer.status, answer.reason
        retried = is_retryable_status(status)
        if status == 429:
            problem = f"rate limited (429) from {shown}"
        else:
            problem = f"{status}{' ' + reason if reason else ''} from {shown}"
        if detail:
            problem += f": {detail}"
        return HttpError("status", shown, problem, status=status, reason=reason, detail=detail,
                         attempts=attempts, retried=retried)

    def _connection_failure(self, exc: Exception, shown: str, timeout: float, attempts: int) -> HttpError:
        """Name a failure to get any answer; ``retried`` says whether it is worth another attempt."""
        import http.client  # deferred with urllib; cheap once urllib_transport ran
        import ssl
        import urllib.error

        reason: object = exc.reason if isinstance(exc, urllib.error.URLError) else exc
        kind: FailureKind
        if isinstance(exc, AnswerTooLarge):
            return HttpError("size", shown, f"{shown} answered with {exc} (the most memdeck reads)",
                             attempts=attempts)
        if _is_refused(reason):
            kind, problem = "refused", f"connection refused: is the server running at {shown}?"
        elif isinstance(reason, socket.gaierror):
            kind, problem = "dns", f"cannot resolve the host in {shown}"
        elif isinstance(reason, ssl.SSLCertVerificationError):
            why = getattr(reason, "verify_message", None) or reason
            kind, problem = "tls", f"the TLS certificate of {shown} was refused: {why}"
        elif isinstance(reason, TimeoutError):
            kind, problem = "timeout", f"no answer from {shown} within {timeout:g} s"
        elif isinstance(reason, (OSError, http.client.HTTPException)):
            kind, problem = "network", f"cannot reach {shown}: {reason or type(reason).__name__}"
        elif isinstance(exc, urllib.error.URLError):
            kind, problem = "network", f"cannot reach {shown}: {reason}"
        else:
            raise exc  # a bug (or a test transport's assertion), not a network failure
        retried = kind in ("timeout", "network") or (kind == "refused" and self.policy.retry_refused)
        return HttpError(kind, shown, problem, attempts=attempts, retried=retried)
