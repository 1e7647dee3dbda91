"""Pure domain: values, rules and text functions. No I/O, no clock, no randomness."""
