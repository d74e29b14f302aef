"""schemathesis against the served ``/openapi.json``: every operation, authenticated, on both
backends.

No answer may be a 5xx, and every answer must match what the document says of it: its
status, content type, headers and body schema; schema-violating requests must be refused;
undeclared methods must be 405 with ``Allow``; every operation must refuse a request without
credentials. Where server and document disagree, one of them is wrong (a document that lies is
a bug too). Not checked: that every schema-valid request is accepted, because the document
cannot express every rule (references must exist, names must be unique, cross-field rules).

``PLINTH_FUZZ_EXAMPLES`` sets the examples per operation: a few in ``make test``, 2000 in
``make fuzz``, where the coverage phase (boundary values and one violation at a time for every
keyword of every schema, some minutes per backend) runs too.
"""

from __future__ import annotations

import os
from collections.abc import Iterator

import httpx
import orjson
import pytest
import schemathesis
from hypothesis import HealthCheck, settings
from schemathesis import checks

from plinth.kinds import REGISTRY
from plinth.server.openapi import openapi_document
from tests.api.conftest import BACKENDS
from tests.support.server import ServerProcess, serving

EXAMPLES = int(os.environ.get("PLINTH_FUZZ_EXAMPLES", "10"))
LONG_RUN = EXAMPLES >= 100
PHASES = ["examples", "coverage", "fuzzing"] if LONG_RUN else ["examples", "fuzzing"]

CHECKS = [
    checks.not_a_server_error,
    checks.status_code_conformance,
    checks.content_type_conformance,
    checks.response_headers_conformance,
    checks.response_schema_conformance,
    checks.negative_data_rejection,
    checks.unsupported_method,
    checks.ignored_auth,
]

#: The document the server serves, built by the same function; the first test checks that the
#: server serves exactly these bytes, so the operations below are those of ``/openapi.json``.
DOCUMENT = openapi_document(REGISTRY)
schema = schemathesis.openapi.from_dict(orjson.loads(DOCUMENT))
# Credentials are sent with every request (below), not generated: ``ignored_auth`` checks that
# each operation refuses a request without them. Unknown query parameters are ignored by design.
schema.config.generation.update(max_examples=EXAMPLES, with_security_parameters=False, allow_extra_parameters=False)
schema.config.phases.update(phases=PHASES)


@pytest.fixture(scope="module", params=BACKENDS)
def server(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    # The fuzzer sends far more requests a second than the rate limit allows: it has its own tests.
    with serving(request.param, tmp_path_factory.mktemp("fuzz"), ("--rate-limit", "0", "--no-access-log")) as proc:
        yield proc


def test_the_fuzzed_document_is_the_served_one(server: ServerProcess) -> None:
    assert httpx.get(f"{server.url}/openapi.json").content == DOCUMENT


@schema.parametrize()
@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck))
def test_every_operation_answers_as_documented(case: schemathesis.Case, server: ServerProcess) -> None:
    # A watch never ends by itself, so no request here asks for one (tests/api/test_watch.py).
    if case.query:
        case.query.pop("watch", None)
    case.call_and_validate(base_url=server.url, headers={"Authorization": f"Bearer {server.key}"}, checks=CHECKS)
