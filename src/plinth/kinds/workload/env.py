"""A container's environment variables, ``env[]`` (docs.controlplane.com/reference/workload/containers).

Names: ``^[-._a-zA-Z][-._a-zA-Z0-9]*$``, at most 120 characters, not under the ``CPLN_``
prefix the platform injects its own variables with (AI), and not one of the Knative names
``K_SERVICE``, ``K_CONFIGURATION``, ``K_REVISION`` in any case (TF compares them
case-insensitively). The prefix check is case-sensitive, as variable names are: ``cpln_x``
is not one of the platform's. Values: at most 4096 characters (TF, DOCS); secret references
(``cpln://secret/...``), pod-field references and ``$(VAR)`` expansions are plain strings
here. The ``PORT`` rule needs the container's ports and is in ``container_rules``.
"""

from __future__ import annotations

import re
from typing import Annotated

from pydantic import AfterValidator, Field

from plinth.kinds.spec_model import SpecModel

ENV_NAME_MAX = 120
ENV_VALUE_MAX = 4096
RESERVED_ENV_PREFIX = "CPLN_"
FORBIDDEN_ENV_NAMES: frozenset[str] = frozenset({"K_SERVICE", "K_CONFIGURATION", "K_REVISION"})

#: Matched whole (``re.fullmatch``): a Python ``$`` would also accept a trailing newline.
_ENV_NAME = re.compile(r"[-._a-zA-Z][-._a-zA-Z0-9]*")


def _check_env_name(name: str) -> str:
    if len(name) > ENV_NAME_MAX:
        raise ValueError(f"must be at most {ENV_NAME_MAX} characters")
    if not _ENV_NAME.fullmatch(name):
        raise ValueError("must match ^[-._a-zA-Z][-._a-zA-Z0-9]*$ (letters, digits, '-', '.', '_'; no leading digit)")
    if name.startswith(RESERVED_ENV_PREFIX):
        raise ValueError(f"the '{RESERVED_ENV_PREFIX}' prefix is reserved for variables the platform injects")
    if name.upper() in FORBIDDEN_ENV_NAMES:
        raise ValueError(f"'{name}' is reserved by the platform")
    return name


class ContainerEnvVar(SpecModel):
    name: Annotated[str, AfterValidator(_check_env_name)]
    value: Annotated[str, Field(max_length=ENV_VALUE_MAX)] | None = None
