"""The secret guard: deterministic rules that spot credentials in text before it is stored.

`scan` returns every secret-looking span; `redact` replaces only those spans. The rules are data
(`rules.toml`, one credential format each, in the manner of gitleaks' table) plus one generic rule
for `KEY = value` assignments that reads the *value*: a quoted literal or a token-shaped word is a
candidate, a code expression or a placeholder is not (decisions 15.H1-15.H4).
"""

from kaeru.domain.secrets.engine import Finding, Rule, redact, rules, scan

__all__ = ["Finding", "Rule", "redact", "rules", "scan"]
