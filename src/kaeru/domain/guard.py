"""The secret guard, as the write path sees it: `scan` a text, `redact` what it found.

The detector lives in `kaeru.domain.secrets` (a rule table kept as data plus a generic
`KEY = value` rule that reads the value); this module is the stable name the service layer uses.
"""

from __future__ import annotations

from kaeru.domain.secrets import Finding, redact, rules, scan

__all__ = ["Finding", "redact", "rules", "scan"]
