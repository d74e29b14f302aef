"""What ``main`` needs to know about a run to report its failure the right way.

Commands fill it in as they learn things (the ``-o`` given, the transcript for ``-v``);
``main`` reads it when an exception reaches it. It is the one piece of shared state, kept
on the click context's ``obj``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from plinth.cli.env import CliEnv

if TYPE_CHECKING:
    from plinth.cli.debug import Transcript


@dataclass
class RunState:
    env: CliEnv
    #: the ``-o`` flag as given (errors ignore a profile's default format, as the official CLI does)
    error_output: str | None = None
    color: bool = False
    transcript: Transcript | None = None
