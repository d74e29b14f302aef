"""LogQL's stream selectors and line filters (runtime/logs/logql.py): every operator, and the
refusal of what is not supported, naming it."""

from __future__ import annotations

import pytest

from plinth.runtime.logs.logql import QueryError, parse

LABELS = {"gvc": "main", "workload": "web", "replica": "web-0", "stream": "stdout"}


@pytest.mark.parametrize(
    ("selector", "selected"),
    [
        ('{workload="web"}', True),
        ('{workload="api"}', False),
        ('{gvc="main", workload!="api"}', True),
        ('{gvc="main", workload!="web"}', False),
        ('{workload=~"w.b"}', True),
        ('{workload=~"w"}', False),  # anchored: the whole value must match
        ('{gvc="main", workload!~"a.*"}', True),
        ('{gvc="main", workload!~"we.*"}', False),
        ('{gvc="main", stream="stderr"}', False),
        ('{gvc="main", stream="stdout",}', True),
        ("{workload=`web`}", True),
        ('{workload="web", location=""}', True),  # a label a stream lacks reads as ""
        ('{workload="web", location!=""}', False),
    ],
)
def test_stream_selectors(selector: str, selected: bool) -> None:
    assert parse(selector).selects(LABELS) is selected


@pytest.mark.parametrize(
    ("filters", "kept"),
    [
        ('|= "error"', ["an error here", "error: two"]),
        ('!= "error"', ["all fine"]),
        ('|~ "^error"', ["error: two"]),
        ('!~ "e[r]+or"', ["all fine"]),
        ('|= "error" != "two"', ["an error here"]),
        ('|~ `(?i)ALL` |= "fine"', ["all fine"]),
        ('|= "\\"quoted\\""', []),
    ],
)
def test_line_filters_chain(filters: str, kept: list[str]) -> None:
    test = parse('{workload="web"} ' + filters).line_test()
    assert test is not None
    assert [line for line in ["an error here", "all fine", "error: two"] if test(line)] == kept


def test_a_query_without_filters_keeps_every_line() -> None:
    assert parse('{workload="web"}').line_test() is None


@pytest.mark.parametrize(
    ("query", "named"),
    [
        ('{workload="web"} | json', "'| json'"),
        ('{workload="web"} |= "x" | logfmt', "'| logfmt'"),
        ('{workload="web"} | line_format "{{.msg}}"', "'| line_format'"),
        ('{workload="web"} | level="error"', "label filters"),
        ('rate({workload="web"}[5m])', "metric queries (rate(...))"),
        ('sum by (replica) (count_over_time({workload="web"}[1m]))', "metric queries (sum(...))"),
        ("{}", "at least one matcher"),
        ('{workload!="web"}', "does not match an empty value"),  # Loki's rule: it would read everything
        ('{workload=~".*"}', "does not match an empty value"),
        ('{workload="web"', "ends too early"),
        ('{workload="web"} |= ', "ends too early"),
        ('{workload="web"} "x"', "syntax error at column 18"),
        ("workload", "must start with a stream selector"),
        ('{workload=~"("}', "invalid regular expression"),
        ('{workload="web"} |~ "(a"', "invalid regular expression"),
        ('{workload="web"} |~ "' + "a" * 300 + '"', "at most 256 characters"),
    ],
)
def test_what_is_not_supported_is_named(query: str, named: str) -> None:
    with pytest.raises(QueryError, match=None) as caught:
        parse(query)
    assert named in str(caught.value)
