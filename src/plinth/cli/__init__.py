"""The ``plinth`` command line: ``serve``, ``rest`` and ``profile``."""
