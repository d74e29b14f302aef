"""The contract a kind implements: one :class:`KindSpec` value per kind module.

A kind holds *rules*; the engine (``plinth.engine``) holds *order*. A kind is its ``name`` and
``scope`` and six small declarations, each stating its own contract: :class:`Schema` (what an
item is made of), :class:`Rules` (the hooks judging a write or a delete), :class:`Status` (the
computed ``status`` and the one list of what it reads), :class:`Lifecycle` (records owned,
built-ins, what a create answers once), :class:`Access` (permissions and what a write changes
about them) and :class:`Presentation` (how the API and clients show items).

For every create, PUT or PATCH the engine runs, for any kind, in this order (the code is
``engine/writes.py`` and ``engine/build.py``; docs/architecture.md, "The write pipeline"):

1. read the container and the stored item (fresh), and judge the preconditions (``edit``,
   ``Lifecycle.builtin_is_read_only``, a client-sent ``version``); a PATCH is merged;
2. decode the body; drop server-owned fields (``meta.SERVER_OWNED`` plus
   ``Schema.server_fields``); fill metadata (``id``, ``description`` defaulting to the name)
   and check name, description and tags; validate ``top_level_model`` and ``spec_model``
   (unknown fields rejected; the stored spec is the model's dump, defaults filled in);
3. ``Rules.prepare``, then ``Rules.validate`` and ``Schema.immutable``: every error at once;
4. ``Access.write_permissions``; ``Rules.references`` checked and resolved into
   ``ctx.resolved``, then ``Rules.validate_resolved``; any error so far is one 400; then the
   escalation rule (``Access.confers``, ``members``, ``member_query``);
5. a write that changes nothing answers the stored item; ``Rules.protected_change``;
6. ``Status.compute`` on the candidate, **before the commit**: its context is filled as
   ``Status.depends_on`` declares, from reads made now, outside any storage transaction;
7. one storage transaction, committed atomically with compare-and-swap on ``version``: the
   item (with the status just computed, so it is stored and answered with it), its event, the
   access generation (``Access.affects_access``), the sealed fields (``Schema.sealed``), and
   the new statuses of the items whose status reads this one (status-only rewrites that keep
   their version and have no event). A write that lost a race runs again from step 1;
8. after the commit: the statuses this write may have changed are computed again from what
   is stored, and rewritten until they agree (a concurrent write may have refreshed them from
   an older read); the engine extensions settle theirs; ``Lifecycle.shown_once`` is applied
   to a create's answer.

Hooks never touch HTTP, SQL or the clock: what they may read arrives in :class:`KindContext`
(the org, the parent GVC, the items their references point at, the time ``now``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Literal, TypeVar

from pydantic import BaseModel

from plinth.errors import FieldError
from plinth.kinds.permissions import BASIC_IMPLIED, BASIC_PERMISSIONS

if TYPE_CHECKING:
    from plinth.kinds.actions import Handler

Item = dict[str, Any]
_D = TypeVar("_D")
Scope = Literal["root", "org", "gvc"]

#: Properties every kind's items can be queried and sorted by.
COMMON_QUERY_PROPERTIES: tuple[str, ...] = ("id", "name", "version", "description", "created", "lastModified")

CRUD_VERBS: frozenset[str] = frozenset({"get", "list", "create", "replace", "patch", "delete"})

#: The public base domain of generated host names unless the server is given another
#: (``--base-domain``): the hosted platform's, so endpoints have the shapes clients expect.
DEFAULT_BASE_DOMAIN = "cpln.app"
#: How a generated host name becomes a URL clients reach (a workload's endpoint): the platform's.
DEFAULT_ENDPOINT_FORMAT = "https://{host}"


@dataclass(frozen=True, slots=True)
class Reference:
    """A link held by an item, declared by :attr:`Rules.references`.

    ``path`` is where the link sits (for error messages); ``kinds`` restricts the target
    kind (``None``: any); when ``must_exist`` is true the engine answers 400 unless the
    target exists in the same org. Every reference must be a well-formed link of the
    item's own org (short ``//kind/name`` links are accepted and mean "this org").
    """

    path: str
    link: str
    kinds: frozenset[str] | None = None
    must_exist: bool = True
    #: Store the link's full form at ``path`` (``False`` when ``path`` holds something else
    #: that names the item, such as a volume URI ``cpln://volumeset/data``).
    rewrite: bool = True


@dataclass(frozen=True, slots=True)
class GrantTargets:
    """The items a grant-giving item (a policy) applies to: those of ``kind`` it links
    (``hrefs``), or every item of ``kind`` when ``every``; ``binds_identity``: whether it grants
    to an identity (only identities' grants are asked by statuses); ``identities``: the links
    of those identities, as written (so only the statuses asking about them need settling)."""

    kind: str
    every: bool
    hrefs: tuple[str, ...]
    binds_identity: bool
    identities: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class GrantQuestion:
    """Whether ``principal`` (a link) holds ``permission`` on the item of ``kind`` at ``target``
    under the org's policies: a question a kind's status asks (:class:`AsksGrants`),
    which the engine answers in :attr:`KindContext.grants`."""

    principal: str
    permission: str
    kind: str
    target: str


@dataclass(frozen=True, slots=True)
class Conferred:
    """A grant an item confers (:attr:`Access.confers`): ``principal`` (a full link) holds
    ``permission`` on the items of ``kind`` that ``target`` covers: ``("all",)``, ``("link",
    href)`` or ``("query", <the query as canonical JSON>)``."""

    principal: str
    permission: str
    kind: str
    target: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class KindContext:
    """What a hook may read. Built by the engine for each write; hooks must not mutate it.

    - ``org``: the org name; ``gvc``: the parent GVC name for GVC-scoped kinds.
    - ``parent``: the parent GVC item (GVC-scoped kinds), else ``None``.
    - ``resolved``: the current item behind each declared reference, by full href
      (``None`` when it does not exist).
    - ``now``: the write's timestamp, ISO-8601 with milliseconds and ``Z``.
    - ``id``: the item's id (set before ``prepare``; new on create, kept on update); lets a
      hook derive stable server-owned values from it (a GVC's ``alias``).
    - ``base_domain``: the server's public base domain for generated host names
      (``--base-domain``; a workload's endpoints, a domain's DNS targets).
    - ``endpoint_format``: how such a host name becomes the URL clients reach, ``{host}``
      replaced: ``https://{host}`` as on the platform; with ``--runtime containers``, the
      gateway's ``http://{host}:{port}`` (docs/runtime.md).
    - ``referrers``: for ``Status.compute`` of a kind whose status :class:`ReadsLinkers`, the
      links of the items of those kinds that link to this item, sorted (a volume set's workloads).
    - ``reported``: for ``Status.compute`` of a kind whose status :class:`ReadsRuntime`, what the
      runtime reports of the item: ``{"ready": bool, "replicas": int, "message": str}``.
    - ``placements``: for ``Status.compute`` of a kind whose status :class:`ReadsPlacements`,
      the location names each GVC it reads (``parent``,
      and the GVCs in ``resolved``) is placed in, by the GVC's href: its ``locationLinks`` and
      what its ``locationQuery`` selects among the org's enabled locations. Read it through
      :func:`plinth.kinds.links.gvc_locations`, which falls back to the links alone.

    - ``grants``: for ``Status.compute`` of a kind whose status :class:`AsksGrants`, the answer
      to each of its questions (a workload's identity may ``reveal`` each secret it references).

    ``resolved`` is filled for ``Rules.validate_resolved`` and ``Status.compute``; ``referrers``,
    ``reported``, ``placements`` and ``grants`` for ``Status.compute`` (and the runtime's
    blockers); ``prepare`` and ``validate`` see them empty.
    """

    org: str
    now: str
    gvc: str | None = None
    parent: Item | None = None
    resolved: Mapping[str, Item | None] = field(default_factory=dict)
    id: str | None = None
    base_domain: str = DEFAULT_BASE_DOMAIN
    endpoint_format: str = DEFAULT_ENDPOINT_FORMAT
    referrers: tuple[str, ...] = ()
    reported: Mapping[str, Any] | None = None
    placements: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    grants: Mapping[GrantQuestion, bool] = field(default_factory=dict)

    def lookup(self, href: str) -> Item | None:
        return self.resolved.get(href)


def _no_prepare(item: Item, old: Item | None, ctx: KindContext) -> None:
    return None


def _no_errors(item: Item, old: Item | None, ctx: KindContext) -> list[FieldError]:
    return []


def _empty_status(item: Item, ctx: KindContext) -> dict[str, Any]:
    return {}


def _no_references(item: Item, org: str) -> list[Reference]:
    return []


def _no_resolved_errors(item: Item, ctx: KindContext) -> list[FieldError]:
    return []


def _no_extra_permissions(item: Item, old: Item | None) -> tuple[str, ...]:
    return ()


def _no_blockers(item: Item, ctx: KindContext) -> list[str]:
    return []


def default_name_rule(name: str) -> str | None:
    """The common name rule (TF validators/name_validator.go); returns a message, or ``None`` when the name is fine."""
    from plinth.meta import NAME_MAX, NAME_PATTERN

    if len(name) > NAME_MAX:
        return f"must be at most {NAME_MAX} characters"
    if not NAME_PATTERN.fullmatch(name):
        return "must match ^[a-z][-a-z0-9]*[a-z0-9]$ (lowercase letters, digits and '-', starting with a letter)"
    return None


@dataclass(frozen=True, slots=True)
class ActionCase:
    """One call of an action's example (:attr:`KindAction.examples`): the OpenAPI test makes it
    on the items the kind's :class:`KindExample` created, and checks the answer.

    - ``params``: values of the declared path's ``{x}`` segments, and overrides of ``name``
      (``{"name": "no-such-account"}``: a 404 case);
    - ``body``: the request body (``None``: none is sent);
    - ``status``: the status the call must answer;
    - ``has``: fields the answer's JSON object must hold with these values (objects compared by
      the keys given, other values by equality; ``None``: nothing beyond the status and schema);
    - ``lacks``: top-level fields the answer must not have (an agent that never connected has
      no ``lastActive``).

    Strings in ``params``, ``body`` and ``has`` (keys too) may hold ``{name}`` (the name of the
    item the kind's example made), ``{NAME}`` (the same, in capitals), ``{org}`` and ``{gvc}``.
    """

    status: int
    params: Mapping[str, str] = field(default_factory=dict)
    body: Any = None
    has: Mapping[str, Any] | None = None
    lacks: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class KindAction:
    """An endpoint one kind serves beyond its verbs (``POST .../serviceaccount/{name}/-addKey``).

    Declaring it is registering it: ``server/actions.py`` matches a request to the declaration
    and calls its ``handler``; the same declaration is what the OpenAPI document lists, and the
    OpenAPI tests call every listed operation (its ``examples``) on the real app, so the two
    cannot drift. Actions every kind has (``-eventlog``, ``-accessreport``,
    ``-schema/permissions``) are not declared per kind.

    - ``path``: what follows the collection (or, with ``on_item``, the item) path, from the
      action on: ``-invite``, ``-for/email/{email}``. A ``{x}`` segment is a path parameter
      holding any string the action then judges (a 404 when it names nothing).
    - ``handler``: the ``async`` function serving it, given an
      :class:`~plinth.kinds.actions.ActionContext` (what it may do) and answering an
      :class:`~plinth.kinds.actions.Answer`.
    - ``body``: the model of the request body; ``None`` when the action takes none.
    - ``answer``: the model of the answer (its JSON Schema is the document's); ``response``
      names a schema the document already has instead (``SecretQueryResult``); with neither,
      the answer is the kind's item, as a GET answers it.
    - ``examples``: the calls the OpenAPI test makes (a success and the refusals).
    """

    operation_id: str
    method: Literal["GET", "POST"]
    path: str
    summary: str
    handler: Handler
    on_item: bool = False
    body: type[BaseModel] | None = None
    status: int = 200
    answer: type[BaseModel] | None = None
    response: str | None = None
    examples: tuple[ActionCase, ...] = ()


@dataclass(frozen=True, slots=True)
class KindExample:
    """A kind's case for the shared kind conformance suite (``tests/api/test_kind_conformance.py``).

    Declared with the kind (:attr:`KindSpec.example`); every kind that clients create (``create``
    among its verbs, below the root) must have one. Through HTTP, on both storage backends, the
    suite creates each of ``needs``, then checks that:

    - ``valid`` is created (201, ``version`` 1) and then read back by GET and by the list;
    - each body of ``invalid`` is refused with a 400 whose ``details.errors`` name its JSON path
      (``spec.ports[0].number``), and nothing is stored under its ``name``;
    - ``update``, sent as a PATCH to the created item, succeeds and makes ``version`` 2; a PUT of
      the answer makes it 3; a DELETE answers 202 and the item is gone;
    - ``valid`` with an unknown top-level field is a 400 naming only that field.

    Every string in these bodies and paths, keys included, may hold ``{org}`` (the org the suite
    works in) and ``{n}`` (a suffix unique to the test, so cases never share a name); the suite
    fills them in. ``needs`` holds ``(collection path, body)`` pairs, created in order (a GVC a
    GVC-scoped kind lives in, a service account a group lists). ``gvc`` names the parent GVC of a
    GVC-scoped kind's items (one of ``needs`` creates it) and is ``None`` for org-scoped kinds.
    """

    valid: Mapping[str, Any]
    invalid: tuple[tuple[Mapping[str, Any], str], ...]
    update: Mapping[str, Any]
    needs: tuple[tuple[str, Mapping[str, Any]], ...] = ()
    gvc: str | None = None


@dataclass(frozen=True, slots=True)
class Schema:
    """What an item of the kind is made of, checked by ``engine/pipeline.build_candidate``
    (steps 4 and 5 of the write: server-owned fields dropped, then the envelope and the models).

    Data only, no hooks but ``name_rule`` (pure: a message when ``name`` is not allowed, or
    ``None``). A body is decoded, the server's fields are dropped (``meta.SERVER_OWNED`` plus
    ``server_fields``), ``name`` is judged by ``name_rule``, ``description`` defaults to the
    name, tags are checked, ``top_level_model`` and ``spec_model`` validate what they cover
    (unknown fields rejected; the stored spec is the model's dump, so defaults on the model are
    filled in) and the stored item's ``server_fields`` are carried over. ``immutable`` paths
    are compared with the stored item on update, with the rules' errors.
    """

    #: The pydantic model of ``spec`` (``None``: no model judges it).
    spec_model: type[BaseModel] | None = None
    #: A body without ``spec`` is a 400 (``spec`` is otherwise filled from ``spec_model``'s defaults).
    spec_required: bool = False
    #: Extra top-level fields a client may send (beyond the envelope), as one pydantic model.
    top_level_model: type[BaseModel] | None = None
    #: Extra top-level fields the server owns for this kind (e.g. ``alias``, ``origin``).
    server_fields: frozenset[str] = frozenset()
    #: Server-owned arrays a client may shrink with ``$drop/<field>``, by name (a service
    #: account's ``keys``: revoking a key is a PATCH ``{"$drop/keys": [name, ...]}``). Every
    #: other directive or value for these fields is still dropped like any server-owned field.
    droppable_server_lists: frozenset[str] = frozenset()
    #: Dotted paths (``spec.performanceClass``) that may not change after create.
    immutable: tuple[str, ...] = ()
    #: ``False`` for a kind whose items carry no ``description``: a body naming one is a 400.
    has_description: bool = True
    #: ``False`` for a kind whose items carry no ``tags`` (a quota): a body naming them is a 400.
    has_tags: bool = True
    #: Reserved ``cpln/`` tags clients may set on items of this kind, beyond the ones every
    #: kind allows (``meta.CLIENT_SETTABLE_RESERVED_TAGS``).
    reserved_tags: frozenset[str] = frozenset()
    #: Items are addressed by their ``id`` (``/org/{org}/quota/{id}``), which is also the stored
    #: key's name, because their names repeat. Only for kinds the server creates: the id is the
    #: name the server creates the item under, and ``name`` must then be a server field.
    addressed_by_id: bool = False
    #: A message when a name is not allowed, else ``None`` (pure).
    name_rule: Callable[[str], str | None] = default_name_rule
    #: Top-level fields sealed at rest (a secret's ``data``): the engine seals them before the
    #: record is stored, keeps them out of every stored document, event and export, and opens them
    #: only to compare and merge writes and for the kind's reveal action (``engine/sealed.py``).
    #: Hooks see them in the clear. Each must be a field of ``top_level_model``.
    sealed: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Rules:
    """The kind's rules on a write or a delete, run by the engine in this order, every one
    before the commit and none of them after it:

    - ``prepare(item, old, ctx) -> None`` (step 5): may mutate ``item`` (the candidate, whose
      ``spec`` already passed ``Schema.spec_model``); must not mutate ``old`` (the stored item
      on update, ``None`` on create) or ``ctx``. Fills cross-field defaults and server fields.
    - ``validate(item, old, ctx) -> list[FieldError]`` (step 5, after ``prepare``): must not
      mutate anything; returns every rule violation with its JSON path
      (``spec.ports[0].routes``). Never raises. ``ctx.resolved`` is empty here.
    - ``references(item, org) -> list[Reference]`` (step 7): the links the item holds; pure.
      The engine checks them, stores them in full form, resolves them into ``ctx.resolved``
      and indexes them (what a status that reads them, :class:`ReadsLinked`, is refreshed by).
    - ``validate_resolved(item, ctx) -> list[FieldError]`` (step 7, after the references are
      checked): rules on the items they resolve to (``ctx.resolved``); pure. Any error so far
      is one 400.
    - ``protects``: kinds an item of this kind protects while it links to them: deleting one
      is a 409 that names the items linking to it (a volume set mounted by a workload).
    - ``protected_change(new, old) -> str | None`` (step 8, on a kind others protect): what an
      update does that the items linking to it would not survive (``"disabled"``: a location
      a GVC is placed in), or ``None``; the engine refuses such an update with 409 naming
      them, as it refuses the delete. Pure.
    - ``forget(item, href, org) -> Item | None`` (a delete of another item): ``item`` without
      its links to ``href``, the item being deleted, or ``None`` when it holds none it must
      let go of. The engine applies it to every item of this kind that references ``href``,
      in the delete's transaction (an update, with its event), and refuses the delete with
      409 when the result breaks this kind's ``validate``. Must not mutate ``item``.
    - ``create_refusal``: for a kind clients cannot create (``create`` not among
      ``Access.verbs``) whose POST the platform refuses with 403 rather than 405: the message
      (an image: "You can create an image only by pushing"). ``None``: a POST is the usual 405.
    """

    prepare: Callable[[Item, Item | None, KindContext], None] = _no_prepare
    validate: Callable[[Item, Item | None, KindContext], list[FieldError]] = _no_errors
    references: Callable[[Item, str], list[Reference]] = _no_references
    validate_resolved: Callable[[Item, KindContext], list[FieldError]] = _no_resolved_errors
    protects: frozenset[str] = frozenset()
    protected_change: Callable[[Item, Item], str | None] | None = None
    forget: Callable[[Item, str, str], Item | None] | None = None
    create_refusal: str | None = None


@dataclass(frozen=True, slots=True)
class ReadsLinked:
    """The status reads the items of ``kinds`` it links to (``Rules.references``, resolved into
    ``ctx.resolved``) or lives in (``ctx.parent``, for a kind scoped to one of ``kinds``): a
    write or delete of such an item rewrites the statuses of the items linking to it or inside
    it, in its own transaction, and settles them again after its commit."""

    kinds: frozenset[str]


@dataclass(frozen=True, slots=True)
class ReadsLinkers:
    """The status reads which items of ``kinds`` link to the item (``ctx.referrers``, their
    links, sorted: a volume set's workloads): a write or delete of such an item rewrites the
    statuses of what it links to and linked to before, in its own transaction, and settles
    them again after its commit."""

    kinds: frozenset[str]


@dataclass(frozen=True, slots=True)
class ReadsSelected:
    """The status reads the items of ``kind`` that a query held at the dotted ``path`` of an item
    of ``holder`` it reads selects (a GVC's ``spec.staticPlacement.locationQuery`` selects
    locations). What a query selects can change with any write of an item of ``kind``, so after
    one commits the engine settles the statuses that read each ``holder`` item holding such a
    query (every status that :class:`ReadsLinked` ``holder``)."""

    kind: str
    holder: str
    path: str


@dataclass(frozen=True, slots=True)
class ReadsPlacements:
    """The status reads where the GVCs it reads (``ctx.parent`` and GVCs in ``ctx.resolved``) are
    placed: ``ctx.placements`` is filled (``engine/placement.py``) only for kinds declaring it,
    so no other kind pays for resolving them."""


@dataclass(frozen=True, slots=True)
class AsksGrants:
    """The status asks the org's policies ``questions(item, org)`` (pure), answered in
    ``ctx.grants`` (``engine/grants.py``): a write of a grant-giving item (``Access.grant_targets``,
    a policy) that may change an answer settles the statuses that asked after its commit, and an
    item that asked settles its own status after its own commit."""

    questions: Callable[[Item, str], tuple[GrantQuestion, ...]]


@dataclass(frozen=True, slots=True)
class ReadsRuntime:
    """The runtime runs items of this kind and reports on them: the status reads ``ctx.reported``
    (``{"ready": bool, "replicas": int, "message": str}``, for an item inside a GVC).
    ``blockers(item, ctx) -> list[str]``: why the runtime cannot run the item now (a secret
    reference that does not hold), one sentence each; the runtime reports it not ready with them
    as its message. Pure; sees ``resolved`` and ``grants``."""

    blockers: Callable[[Item, KindContext], list[str]] = _no_blockers


#: One thing besides the item itself that its status reads (:attr:`Status.depends_on`).
StatusDependency = ReadsLinked | ReadsLinkers | ReadsSelected | ReadsPlacements | AsksGrants | ReadsRuntime


@dataclass(frozen=True, slots=True)
class Status:
    """The item's ``status``, and everything it reads besides the item.

    ``compute(item, ctx) -> dict``: the whole ``status``, the only source of it; pure (it must
    not mutate ``item`` or ``ctx``). The engine calls it:

    - on every create and update, on the candidate, **before the commit** (step 9, after the
      rules and the no-op check, with ``ctx`` filled as ``depends_on`` declares); the status is
      stored in the same record, by the same atomic storage transaction as the item, and
      answered with it. Its inputs are read before that transaction, not inside it;
    - when something it reads changes, as each dependency type says: for :class:`ReadsLinked`
      and :class:`ReadsLinkers`, in the transaction of the write or delete of that item (a
      status-only rewrite that keeps the item's version, with no event of its own) and again
      after that commit; for :class:`ReadsSelected` and :class:`AsksGrants`, after that commit
      only. After a commit the status is computed from what is stored then and rewritten until
      a read finds it right (a concurrent write may have refreshed it from an older read).

    ``depends_on`` is the one list of what the status reads; the engine finds every status a
    write may change from these declarations alone (``engine/dependencies.py``). A status read
    from the item alone declares nothing; one that reads ``ctx.parent`` or ``ctx.resolved``
    declares :class:`ReadsLinked` of those kinds, or other items' changes never refresh it.
    """

    compute: Callable[[Item, KindContext], dict[str, Any]] = _empty_status
    depends_on: tuple[StatusDependency, ...] = ()

    def reads(self, dependency: type[_D]) -> tuple[_D, ...]:
        """The declared dependencies of one type."""
        return tuple(d for d in self.depends_on if isinstance(d, dependency))


@dataclass(frozen=True, slots=True)
class Lifecycle:
    """What happens to an item besides its rules, beyond the write itself.

    - ``owned_records``: record kinds the engine stores under an item (``Key(org, kind,
      "{gvc}/{name}", id)`` for a GVC-scoped kind), deleted in the item's delete transaction
      (a workload's commands).
    - ``builtin_is_read_only``: items with ``origin: builtin`` are never deleted; with this flag
      a write to one is refused too (before any work on the body).
    - ``shown_once(answer) -> answer``: what the write that creates an item answers beyond the
      stored item (an agent's registration token), applied after the commit to the answer of a
      create (POST, or a PUT answering 201); never stored, never in events or later reads. Not
      pure: it may mint a secret.
    """

    owned_records: tuple[str, ...] = ()
    builtin_is_read_only: bool = False
    shown_once: Callable[[Item], Item] | None = None


@dataclass(frozen=True, slots=True)
class Access:
    """Who may do what with items of the kind, and what writing one changes about who may.

    - ``permissions`` (name -> description) and ``implied`` (what each implies): a kind declares
      both with ``**declare_permissions(...)`` (``kinds/permissions.py``) or keeps the basic
      set; policies validate bindings against them (``plinth.kinds.PERMISSIONS``).
    - ``verbs``: the plain verbs served (405 with ``Allow`` for the others);
      ``delete_permission``: what a delete needs (``manage`` for a kind without ``delete``).
    - ``write_permissions(item, old) -> tuple[str, ...]``: permissions this write needs beyond
      ``create``/``edit`` (a workload whose direct load balancer changes needs
      ``configureLoadBalancer``); pure, judged on the built candidate (step 6).
    - ``affects_access``: writes change who may do what: caches of keys and policy decisions
      are dropped on every replica (the write's transaction bumps the access generation).
    - ``seeds_access``: creating an item seeds items that do (an org seeds its built-in groups
      and policies), without the escalation checks ``affects_access`` brings: the process that
      served the write looks at the access generation again before its next request.
    - ``confers(item, org) -> frozenset[Conferred]``: the grants the item gives (a policy's
      bindings on its target), implied permissions included; ``members(item, org) ->
      frozenset[str]``: for a kind whose items pass their grants on (a group), what makes a
      principal a member (member links, and a token per matching rule); ``member_query(item,
      kind) -> query | None``: the query by which the item admits items of the principal kind
      ``kind`` (a group's ``memberQuery``). A write adding a grant, a member, or making a
      principal match a query is judged by the escalation rule (step 7,
      ``engine/escalation.py``). All pure.
    - ``grant_targets(item, org) -> GrantTargets``: for a kind whose items grant permissions (a
      policy), which items ``item`` grants on; after a write that binds an identity before or
      after, the engine settles the statuses that asked (:class:`AsksGrants`) about the targets
      of both versions. Pure.
    """

    permissions: Mapping[str, str] = field(default_factory=lambda: BASIC_PERMISSIONS)
    implied: Mapping[str, tuple[str, ...]] = field(default_factory=lambda: BASIC_IMPLIED)
    verbs: frozenset[str] = CRUD_VERBS
    delete_permission: str = "delete"
    write_permissions: Callable[[Item, Item | None], tuple[str, ...]] = _no_extra_permissions
    affects_access: bool = False
    seeds_access: bool = False
    confers: Callable[[Item, str], frozenset[Conferred]] | None = None
    members: Callable[[Item, str], frozenset[str]] | None = None
    member_query: Callable[[Item, str], Any] | None = None
    grant_targets: Callable[[Item, str], GrantTargets] | None = None


@dataclass(frozen=True, slots=True)
class Presentation:
    """How the API and clients present items of the kind; data only, never read by a write.

    ``title`` (the OpenAPI document's and messages' name; the capitalised name by default),
    ``query_properties`` (what a query term may name besides ``tags`` and ``spec.*``/``status.*``
    paths) and ``item_links`` (links beyond ``self``/``org``/``gvc``: ``(rel, path under the
    item)``, e.g. a workload's ``("deployment", "deployment")`` -> ``{self}/deployment``) are
    read by the server. The client side (``convert/``, ``cli/``, the console) may not import
    kinds, so ``python -m plinth.kinds.facts`` writes the rest into the generated table
    ``plinth/kindfacts.py`` (and the console's ``templates.json``), which a test holds in step:
    ``terraform_resource``, the official Terraform provider's resource (``None``: it has none,
    and ``-o tf`` is a 400; ``""``: not declared, which a served kind may not leave);
    ``text_columns``, the column titles of the official CLI's ``-o text`` table
    (``cli/output/columns.py`` knows how to fill each title); ``short_names``, the official
    CLI's short names of the kind (``vs``); ``template``, the console's Create template (strings
    may hold ``{org}`` and ``{gvc}``; ``name`` is left empty for the person), which every kind a
    person creates declares.
    """

    title: str = ""
    query_properties: tuple[str, ...] = COMMON_QUERY_PROPERTIES
    item_links: tuple[tuple[str, str], ...] = ()
    terraform_resource: str | None = ""
    text_columns: tuple[str, ...] = ()
    short_names: tuple[str, ...] = ()
    template: Mapping[str, Any] | None = None


@dataclass(frozen=True)
class KindSpec:
    """A kind, declared once: ``name`` and ``scope`` (required), then one small declaration per
    concern, each with its contract in its docstring: :class:`Schema`, :class:`Rules`,
    :class:`Status`, :class:`Lifecycle`, :class:`Access`, :class:`Presentation`. A minimal kind
    is ``KindSpec(name="thing", scope="org")``.

    ``actions``: endpoints beyond the verbs that only this kind serves (:class:`KindAction`).
    ``example``: the kind's case for the shared conformance suite (:class:`KindExample`). Every
    kind with ``create`` among its ``Access.verbs`` declares one (a test names each kind that
    does not), except the root kind: an org is created by the server admin and never deleted.
    """

    name: str
    scope: Scope
    schema: Schema = field(default_factory=Schema)
    rules: Rules = field(default_factory=Rules)
    status: Status = field(default_factory=Status)
    lifecycle: Lifecycle = field(default_factory=Lifecycle)
    access: Access = field(default_factory=Access)
    presentation: Presentation = field(default_factory=Presentation)
    actions: tuple[KindAction, ...] = ()
    example: KindExample | None = None

    def __post_init__(self) -> None:
        if not self.presentation.title:
            object.__setattr__(self, "presentation", replace(self.presentation, title=self.name.capitalize()))
