-- Records are stored as the JSON the API serves; the key columns make them addressable.
CREATE TABLE resources (
    org     TEXT NOT NULL,
    kind    TEXT NOT NULL,
    parent  TEXT NOT NULL,
    name    TEXT NOT NULL,
    id      TEXT NOT NULL UNIQUE,
    version INTEGER NOT NULL,
    doc     TEXT NOT NULL,
    PRIMARY KEY (org, kind, parent, name)
);

-- The links each record holds, so a change of a target can find who points at it.
CREATE TABLE refs (
    org        TEXT NOT NULL,
    kind       TEXT NOT NULL,
    parent     TEXT NOT NULL,
    name       TEXT NOT NULL,
    target     TEXT NOT NULL,
    PRIMARY KEY (org, kind, parent, name, target)
);
CREATE INDEX refs_by_target ON refs (org, target);

-- Every change appends an event in the same transaction as the change.
CREATE TABLE events (
    seq     INTEGER PRIMARY KEY AUTOINCREMENT,
    org     TEXT NOT NULL,
    kind    TEXT NOT NULL,
    parent  TEXT NOT NULL,
    name    TEXT NOT NULL,
    id      TEXT NOT NULL,
    created TEXT NOT NULL,
    doc     TEXT NOT NULL
);
CREATE INDEX events_by_key ON events (org, kind, parent, name, seq);

CREATE TABLE meta (
    name  TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
