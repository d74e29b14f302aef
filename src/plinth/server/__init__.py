"""The HTTP server: a plain ASGI app whose routes come from the kind registry."""
