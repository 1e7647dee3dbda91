"""The command line for people: a thin shell over the service (the only package importing click)."""
