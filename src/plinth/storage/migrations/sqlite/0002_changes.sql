-- The change log watches read (docs/watch.md): one row per change of a record, in commit order,
-- with the record as stored after it (for a delete, the last state). Unlike the event log it
-- holds status-only rewrites too, and it is trimmed (a retention by age and count);
-- AUTOINCREMENT keeps a trimmed seq from ever being handed out again.
CREATE TABLE changes (
    seq     INTEGER PRIMARY KEY AUTOINCREMENT,
    org     TEXT NOT NULL,
    kind    TEXT NOT NULL,
    parent  TEXT NOT NULL,
    name    TEXT NOT NULL,
    type    TEXT NOT NULL,
    doc     TEXT NOT NULL,
    at      REAL NOT NULL
);
