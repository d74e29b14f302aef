"""Request bodies and headers from the command line, read as the official CLI reads them.

Bodies (CLI commands/rest.js): ``--file PATH`` or ``--file -`` (standard input, to end of input), one
JSON or YAML document, loaded with YAML 1.2 core rules as js-yaml does: ``yes`` stays a
string, an unquoted date or timestamp becomes an ISO string with milliseconds, duplicate
keys keep the last value, an empty file means no body.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import IO, Any

from plinth.cli.errors import InputError

_INT = re.compile(r"^[-+]?(?:0b[01]+|0x[0-9a-fA-F]+|0o[0-7]+|[0-9]+)$")
_FLOAT = re.compile(
    r"^(?:[-+]?(?:[0-9]+)(?:\.[0-9]*)?(?:[eE][-+]?[0-9]+)?|\.[0-9]+(?:[eE][-+]?[0-9]+)?"
    r"|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$"
)
_TIMESTAMP = re.compile(
    r"^(?:[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]|[0-9][0-9][0-9][0-9]-[0-9][0-9]?-[0-9][0-9]?"
    r"(?:[Tt]|[ \t]+)[0-9][0-9]?:[0-9][0-9]:[0-9][0-9](?:\.[0-9]*)?(?:[ \t]*(?:Z|[-+][0-9][0-9]?(?::[0-9][0-9])?))?)$"
)
_TIMESTAMP_PARTS = re.compile(
    r"^([0-9]{4})-([0-9]{1,2})-([0-9]{1,2})(?:(?:[Tt]|[ \t]+)([0-9]{1,2}):([0-9]{2}):([0-9]{2})(?:\.([0-9]*))?"
    r"(?:[ \t]*(Z|([-+])([0-9]{1,2})(?::([0-9]{2}))?))?)?$"
)


def read_text(path: str, stdin: IO[str]) -> str:
    """The file's text; ``-`` reads standard input to its end."""
    if path == "-":
        return stdin.read()
    try:
        return Path(path).expanduser().read_text(encoding="utf-8")
    except FileNotFoundError:
        raise InputError(f"ENOENT: no such file or directory, open '{path}'") from None
    except IsADirectoryError:
        raise InputError(f"EISDIR: illegal operation on a directory, read '{path}'") from None
    except OSError as error:
        raise InputError(f"{error.strerror}: open '{path}'") from error


def load_document(text: str, source: str) -> Any:
    """Parse one YAML/JSON document; ``None`` for an empty one. ``source`` names it in errors."""
    import yaml

    loader = _loader_class()(text)
    try:
        try:
            if not loader.check_node():
                return None
            node = loader.get_node()
            if loader.check_node():
                raise InputError("expected a single document in the stream, but found more")
            return loader.construct_document(node)
        finally:
            loader.dispose()
    except yaml.MarkedYAMLError as error:
        raise InputError(_describe_yaml_error(error, text, source)) from error
    except yaml.YAMLError as error:
        raise InputError(f'{error} in "{source}"') from error


def load_documents(text: str, source: str) -> list[Any]:
    """Every document of a YAML/JSON stream (``---`` between them), in order, each parsed as
    :func:`load_document` parses one (``None`` for an empty one, so positions are kept);
    ``source`` names the file in errors.

    Stacks are large, so this one reads fast: a file that is one JSON value is read by the
    JSON parser (JSON is YAML, and reads the same either way), YAML by libyaml's parser when
    PyYAML has it, with the same resolvers and constructors. A file either cannot read is read
    again by :func:`load_document`'s pure-Python loader, whose error message is the one shown.
    """
    if text.lstrip()[:1] in ("{", "["):
        from plinth.client.jsvalues import parse_json

        try:
            return [parse_json(text)]
        except ValueError:
            pass  # not JSON after all (a YAML flow mapping, say): YAML decides
    import yaml

    fast = _fast_loader_class()
    if fast is not None:
        try:
            return _documents(fast(text))
        except yaml.YAMLError:
            pass  # the pure loader reads it again, for js-yaml's message layout
    return _documents_or_error(_loader_class()(text), text, source)


def _documents(loader: Any) -> list[Any]:
    documents: list[Any] = []
    try:
        while loader.check_node():
            documents.append(loader.construct_document(loader.get_node()))
    finally:
        loader.dispose()
    return documents


def _documents_or_error(loader: Any, text: str, source: str) -> list[Any]:
    import yaml

    try:
        return _documents(loader)
    except yaml.MarkedYAMLError as error:
        raise InputError(_describe_yaml_error(error, text, source)) from error
    except yaml.YAMLError as error:
        raise InputError(f'{error} in "{source}"') from error


_FAST_LOADER: Any = None


def _fast_loader_class() -> Any:
    """:func:`_loader_class`'s schema on libyaml's parser; ``None`` without libyaml."""
    global _FAST_LOADER
    import yaml

    if _FAST_LOADER is None and getattr(yaml, "__with_libyaml__", False):
        from yaml.cyaml import CParser  # type: ignore[attr-defined]

        pure = _loader_class()

        class FastJsYamlLoader(CParser, yaml.constructor.SafeConstructor, yaml.resolver.Resolver):
            yaml_implicit_resolvers = pure.yaml_implicit_resolvers
            yaml_constructors = pure.yaml_constructors

            def __init__(self, stream: str) -> None:
                CParser.__init__(self, stream)
                yaml.constructor.SafeConstructor.__init__(self)
                yaml.resolver.Resolver.__init__(self)

        _FAST_LOADER = FastJsYamlLoader
    return _FAST_LOADER


def _describe_yaml_error(error: Any, text: str, source: str) -> str:
    """js-yaml's message layout: the reason, the file and position, then the lines around it."""
    mark = error.problem_mark or error.context_mark
    problem = error.problem or error.context or "invalid YAML"
    if mark is None:
        return f'{problem} in "{source}"'
    line, column = mark.line, mark.column
    lines = text.split("\n")
    first = max(0, line - 3)
    width = len(str(line + 1))
    excerpt = [f" {str(n + 1).rjust(width)} | {lines[n]}" for n in range(first, min(line + 1, len(lines)))]
    pointer = "-" * (width + 3 + column) + "^"
    return f'{problem} in "{source}" ({line + 1}:{column + 1})\n\n' + "\n".join(excerpt) + "\n" + pointer


_LOADER: Any = None


def _loader_class() -> Any:
    """A PyYAML loader with js-yaml's default schema (YAML 1.2 core plus timestamps and merge)."""
    global _LOADER
    if _LOADER is not None:
        return _LOADER
    import yaml

    class JsYamlLoader(yaml.SafeLoader):
        yaml_implicit_resolvers: dict[Any, Any] = {}

    resolvers = [
        ("tag:yaml.org,2002:null", re.compile(r"^(?:~|null|Null|NULL|)$"), ["~", "n", "N", ""]),
        ("tag:yaml.org,2002:bool", re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$"), list("tTfF")),
        ("tag:yaml.org,2002:int", _INT, list("-+0123456789")),
        ("tag:yaml.org,2002:float", _FLOAT, list("-+0123456789.")),
        ("tag:yaml.org,2002:timestamp", _TIMESTAMP, list("0123456789")),
        ("tag:yaml.org,2002:merge", re.compile(r"^<<$"), ["<"]),
    ]
    for tag, pattern, first in resolvers:
        JsYamlLoader.add_implicit_resolver(tag, pattern, first)
    JsYamlLoader.add_constructor("tag:yaml.org,2002:int", _construct_int)
    JsYamlLoader.add_constructor("tag:yaml.org,2002:float", _construct_float)
    JsYamlLoader.add_constructor("tag:yaml.org,2002:timestamp", _construct_timestamp)
    JsYamlLoader.add_constructor("tag:yaml.org,2002:map", _construct_map)
    _LOADER = JsYamlLoader
    return _LOADER


def _construct_int(loader: Any, node: Any) -> int:
    text = loader.construct_scalar(node)
    sign = -1 if text.startswith("-") else 1
    body = text.lstrip("+-")
    for prefix, base in (("0b", 2), ("0x", 16), ("0o", 8)):
        if body.startswith(prefix):
            return sign * int(body[2:], base)
    return sign * int(body)


def _construct_float(loader: Any, node: Any) -> int | float:
    text = loader.construct_scalar(node).lower()
    if text.lstrip("+-") == ".inf":
        return float("-inf") if text.startswith("-") else float("inf")
    if text == ".nan":
        return float("nan")
    value = float(text)
    # JavaScript has one number type: 1.0 is 1, and prints as such.
    return int(value) if value.is_integer() and abs(value) < 2**53 else value


def _construct_timestamp(loader: Any, node: Any) -> str:
    match = _TIMESTAMP_PARTS.match(loader.construct_scalar(node))
    if match is None:
        return str(loader.construct_scalar(node))
    year, month, day, hour, minute, second, fraction, _zone, sign, tz_hour, tz_minute = match.groups()
    moment = datetime(
        int(year),
        int(month),
        int(day),
        int(hour or 0),
        int(minute or 0),
        int(second or 0),
        int(((fraction or "") + "000")[:3]) * 1000,
        tzinfo=UTC,
    )
    if sign:
        offset = timedelta(hours=int(tz_hour), minutes=int(tz_minute or 0))
        moment = moment - offset if sign == "+" else moment + offset
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


def _construct_map(loader: Any, node: Any) -> dict[str, Any]:
    from plinth.client.jsvalues import js_string

    loader.flatten_mapping(node)
    result: dict[str, Any] = {}
    for key_node, value_node in node.value:
        key = loader.construct_object(key_node, deep=True)
        # JavaScript object keys are strings: 1 -> "1", true -> "true"; the last duplicate wins.
        result[js_string(key) if not isinstance(key, str) else key] = loader.construct_object(value_node, deep=True)
    return result


def parse_headers(values: tuple[str, ...] | list[str]) -> list[tuple[str, str]]:
    """``-H 'name: value'`` in curl form (CLI commands/rest.js): split at the first colon, trim both sides;
    no colon means an empty value; a repeated name keeps the last value."""
    headers: dict[str, tuple[str, str]] = {}
    for raw in values:
        name, _, value = raw.partition(":")
        name, value = name.strip(), value.strip()
        if not name:
            raise InputError("header name must be a non-empty string")
        headers[name.lower()] = (name, value)
    return list(headers.values())
