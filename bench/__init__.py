"""``make bench``: Plinth's throughput and latency against a bare-ASGI ceiling, at scale.

Run ``python -m bench --help``. Every module here has one job: ``options`` (flags),
``procs`` (child processes in their own process groups), ``servers`` (Plinth and the ceiling),
``ceiling`` (the bare ASGI app), ``loadgen`` (wrk and its Lua), ``stores`` (SQLite / PostgreSQL
scratch stores), ``items`` (what is stored), ``seed`` (bulk load through the engine),
``client`` (setup requests and cursor walks), ``verdict`` (targets), ``report`` (tables, JSON),
``scenario`` (the order of a run), ``machine`` (facts about this host), ``cpu`` (other
processes' load during a figure). ``python -m bench.profile`` samples GET one domain with py-spy.
"""
