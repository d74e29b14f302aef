"""Who is calling: credentials to principals. Authorization decisions build on this."""
