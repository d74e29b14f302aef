"""The commands that open a store themselves, one module each: ``serve``, ``export`` and
``import`` (``transfer``), ``backup``, ``secrets``, ``signing-key``.

They are the only part of the CLI that imports the server side (server, engine, storage,
sealing, auth, kinds); the client commands never import them (``.importlinter``: nothing but
this package imports it; ``cli/main.py`` names each by its import path, imported when run).
"""
