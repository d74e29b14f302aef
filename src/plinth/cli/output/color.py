"""Terminal colour for JSON and YAML text; used only when a TTY is attached (the writer decides)."""

from __future__ import annotations

import re

RESET = "\x1b[0m"
KEY = "\x1b[35m"
STRING = "\x1b[33m"
NUMBER = "\x1b[32m"
LITERAL = "\x1b[34m"
YELLOW = "\x1b[33m"
RED = "\x1b[31m"

_JSON_TOKEN = re.compile(r'("(?:[^"\\]|\\.)*")(\s*:)?|(-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?)|\b(true|false|null)\b')
_YAML_KEY = re.compile(r"^(\s*(?:- )?)([^\s:'\"#][^:]*?|'[^']*'|\"[^\"]*\")(:)(?=\s|$)", re.MULTILINE)


def colorize_json(text: str) -> str:
    def paint(match: re.Match[str]) -> str:
        string, colon, number, literal = match.groups()
        if string is not None:
            return f"{KEY if colon else STRING}{string}{RESET}{colon or ''}"
        if number is not None:
            return f"{NUMBER}{number}{RESET}"
        return f"{LITERAL}{literal}{RESET}"

    return _JSON_TOKEN.sub(paint, text)


def colorize_yaml(text: str) -> str:
    return _YAML_KEY.sub(lambda m: f"{m.group(1)}{KEY}{m.group(2)}{RESET}{m.group(3)}", text)


def paint(text: str, color: str) -> str:
    return f"{color}{text}{RESET}"
