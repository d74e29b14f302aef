"""The generic engine: one implementation of every verb, for every kind."""
