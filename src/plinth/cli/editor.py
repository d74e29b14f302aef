"""``plinth rest edit``: fetch, edit as YAML, PATCH back (kubectl's edit loop, CLI commands/rest.js).

1. GET the item and write the file: the official header (who patches what), an empty line,
   the item as sorted YAML.
2. Run ``$VISUAL`` / ``$EDITOR`` / ``vi`` on it.
3. Unchanged text, or an object equal to the one read: "not modified", exit 0, nothing sent.
   An emptied file cancels the same way.
4. Otherwise PATCH the whole edited object with the ``version`` that was read, so a change
   made meanwhile by someone else is refused (409) instead of overwritten.
5. A YAML error or a 400: reopen the editor with the problems listed at the top of the file.
   Saving without changes after that gives up.
6. Whenever the run ends without success, the edited file is kept and its path printed.
"""

from __future__ import annotations

import os
import secrets
import string
from pathlib import Path
from typing import Any

from plinth.cli.body import load_document
from plinth.cli.env import CliEnv
from plinth.cli.errors import EditAborted, InputError
from plinth.cli.output import jsyaml
from plinth.cli.output.keyorder import sort_deep
from plinth.cli.settings import Settings
from plinth.client import ApiClient
from plinth.errors import APIError, BadRequest, Conflict

NOT_MODIFIED = "Resource was not modified. No changes have been submitted"
EDITOR_FAILED = "Editor did not exit cleanly"


def header(path: str, who: str) -> str:
    return f"# You are about to PATCH {path}\n# You are performing this operation as {who}\n\n"


def problems_block(problems: list[str]) -> str:
    lines = [
        "# The changes could not be applied. Fix the problems below and save again,",
        "# or save without changes to give up (your edits are kept in this file).",
        "#",
    ]
    lines += [f"#   {line}" for problem in problems for line in problem.splitlines()]
    return "\n".join(lines) + "\n#\n"


def who_am_i(settings: Settings) -> str:
    auth = (settings.profile.request.get("authInfo") if settings.profile else None) or {}
    return str(auth.get("email")) if isinstance(auth, dict) and auth.get("email") else "<system>"


def temp_file(env: CliEnv) -> Path:
    suffix = "".join(secrets.choice(string.ascii_letters + string.digits) for _ in range(12))
    path = Path(env.temp_dir()) / f"tmp-{os.getpid()}-{suffix}-.yaml"
    path.touch(mode=0o600)
    return path


def run_edit(
    env: CliEnv, client: ApiClient, path: str, headers: list[tuple[str, str]], settings: Settings
) -> Any | None:
    """Run the loop; return the PATCH answer to print, or ``None`` when nothing was sent."""
    original = client.request("GET", path).json()
    intro = header(path, who_am_i(settings))
    document = jsyaml.dump(sort_deep(original))
    file = temp_file(env)
    written = intro + document
    file.write_text(written, encoding="utf-8")
    had_problems = False
    while True:
        if env.run_editor([*env.editor_command(), str(file)], env.environ) != 0:
            raise EditAborted(_kept(EDITOR_FAILED, file, file.read_text(encoding="utf-8") != written))
        text = file.read_text(encoding="utf-8")
        if text == written:
            if had_problems:
                raise EditAborted(_kept("Edit cancelled: the file was saved without changes after the errors.", file))
            _not_modified(env, file)
            return None
        try:
            edited = load_document(text, "<editor>")
        except InputError as error:
            written = _reopen(file, intro, [error.message], _strip_header(text))
            had_problems = True
            continue
        if edited is None or edited == original:
            _not_modified(env, file)
            return None
        if isinstance(edited, dict) and isinstance(original, dict) and "version" in original:
            edited = {**edited, "version": original["version"]}
        try:
            answer = client.request("PATCH", path, edited, headers).json()
        except Conflict as error:
            raise EditAborted(
                _kept(
                    f"The item was changed by someone else since it was read ({error.message}). "
                    "Run the edit again to start from the current version.",
                    file,
                )
            ) from error
        except BadRequest as error:
            written = _reopen(file, intro, _problems_of(error), _strip_header(text))
            had_problems = True
            continue
        except APIError:
            env.stderr.write(f"Your edits are kept in {file}\n")
            raise
        file.unlink(missing_ok=True)
        return answer


def _not_modified(env: CliEnv, file: Path) -> None:
    file.unlink(missing_ok=True)
    env.stdout.write(NOT_MODIFIED + "\n\n")


def _kept(message: str, file: Path, changed: bool = True) -> str:
    if not changed:
        file.unlink(missing_ok=True)
        return message
    return f"{message}\nYour edits are kept in {file}"


def _reopen(file: Path, intro: str, problems: list[str], body: str) -> str:
    text = intro + problems_block(problems) + body
    file.write_text(text, encoding="utf-8")
    return text


def _strip_header(text: str) -> str:
    """The user's YAML without the leading comment block this loop writes."""
    lines = text.split("\n")
    index = 0
    while index < len(lines) and (lines[index].startswith("#") or lines[index] == ""):
        index += 1
    return "\n".join(lines[index:])


def _problems_of(error: APIError) -> list[str]:
    details = error.details if isinstance(error.details, dict) else {}
    field_errors = details.get("errors")
    if isinstance(field_errors, list) and field_errors:
        return [f"{e.get('path') or '(body)'}: {e.get('message')}" for e in field_errors if isinstance(e, dict)]
    return [error.message]
