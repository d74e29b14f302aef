"""The client commands, one module each: ``rest``, ``get``, ``apply`` (and ``delete``),
``profile``, ``completion``.

They talk to a server over HTTP only: nothing here (or in the rest of ``plinth.cli`` outside
``plinth.cli.store``) imports the server, the engine or storage (``.importlinter``, "client-side").
``cli/main.py`` names each command by its import path, so a run imports only the one it runs.
"""
