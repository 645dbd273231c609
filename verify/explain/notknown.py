"""The words tools print for a value they do not have: `N/A`, `[N/A]`, `Not Supported`, `[Not Supported]`, `Unknown`,
`Not Available`. Every parser reads them as null (verify/FACTS.md: null is unknown), never as a fact to judge: a
fact the judge would call invalid must not come out of verify's own parser."""
from __future__ import annotations

import re

_NOT_KNOWN = re.compile(r"^\[?\s*(?:n/a|na|not supported|unknown|not available|not applicable|unavailable)\s*\]?$",
                        re.IGNORECASE)


def known(value: str | None) -> str | None:
    """The value, or None where the tool says it has none."""
    return None if value is None or _NOT_KNOWN.match(value.strip()) else value
