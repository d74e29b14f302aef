-- The change log watches read (docs/watch.md), as migrations/sqlite/0002_changes.sql. Rows are
-- inserted at the very end of the writing transaction under a transaction-scoped advisory
-- lock, so seq order is commit order (storage/postgres.py, "commit order").
CREATE TABLE changes (
    seq     BIGSERIAL PRIMARY KEY,
    org     TEXT COLLATE "C" NOT NULL,
    kind    TEXT COLLATE "C" NOT NULL,
    parent  TEXT COLLATE "C" NOT NULL,
    name    TEXT COLLATE "C" NOT NULL,
    type    TEXT NOT NULL,
    doc     JSONB NOT NULL,
    at      DOUBLE PRECISION NOT NULL
);
