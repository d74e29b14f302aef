-- The same tables and keys as migrations/sqlite/0001_initial.sql, in PostgreSQL's types.
-- Key columns use the "C" collation so names order by code point, as on SQLite, whatever
-- the database's default collation is (keyset paging relies on one agreed order).

-- Records are stored as the JSON the API serves; the key columns make them addressable.
-- The primary key is also the btree that keyset paging walks: org-wide (parent, name)
-- and within one parent (name).
CREATE TABLE resources (
    org     TEXT COLLATE "C" NOT NULL,
    kind    TEXT COLLATE "C" NOT NULL,
    parent  TEXT COLLATE "C" NOT NULL,
    name    TEXT COLLATE "C" NOT NULL,
    id      TEXT NOT NULL UNIQUE,
    version BIGINT NOT NULL,
    doc     JSONB NOT NULL,
    PRIMARY KEY (org, kind, parent, name)
);
-- Tag terms compile to containment (@>) and key-exists (?) hints this index answers.
CREATE INDEX resources_tags ON resources USING GIN ((doc -> 'tags'));

-- The links each record holds, so a change of a target can find who points at it.
CREATE TABLE refs (
    org        TEXT COLLATE "C" NOT NULL,
    kind       TEXT COLLATE "C" NOT NULL,
    parent     TEXT COLLATE "C" NOT NULL,
    name       TEXT COLLATE "C" NOT NULL,
    target     TEXT COLLATE "C" NOT NULL,
    PRIMARY KEY (org, kind, parent, name, target)
);
CREATE INDEX refs_by_target ON refs (org, target);

-- Every change appends an event in the same transaction as the change.
CREATE TABLE events (
    seq     BIGSERIAL PRIMARY KEY,
    org     TEXT COLLATE "C" NOT NULL,
    kind    TEXT COLLATE "C" NOT NULL,
    parent  TEXT COLLATE "C" NOT NULL,
    name    TEXT COLLATE "C" NOT NULL,
    id      TEXT NOT NULL,
    created TEXT NOT NULL,
    doc     JSONB NOT NULL
);
CREATE INDEX events_by_key ON events (org, kind, parent, name, seq);

CREATE TABLE meta (
    name  TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
