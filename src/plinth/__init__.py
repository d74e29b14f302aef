"""Plinth: a self-hosted control service that speaks the Control Plane API wire format."""

__version__ = "0.1.0"
