"""Messages as a trader reads them on screen (notices, desktop alerts, tooltips).

The client's messages name the full URL of a request (``cannot reach http://host:port/api/...``)
because the log wants it; a notice does not (a popup carrying a raw URL tells a trader nothing
they can act on). ``in_words`` turns each URL into "the service at <host>" and says a word
repeated back to back once.
"""

from __future__ import annotations

import re
from urllib.parse import urlsplit

#: A URL as the client's messages write it (ends at a space, quote, bracket, or ``: ``).
_URL = re.compile(r"""\bhttps?://[^\s'"<>()\[\],;]+?(?=[.:,;]?(?:\s|$)|['"<>()\[\]])""")
#: A word or a few said twice in a row ("the the", "refused: refused"); never numbers.
_REPEATED = re.compile(r"\b([^\W\d_]+(?:\s+[^\W\d_]+){0,3})(?:(?:\s*:\s*|\s+)\1\b)+", re.IGNORECASE)


def service_at(url: str) -> str:
    """``the service at host:port`` for a URL: no scheme, path or query (they go to the log)."""
    try:
        where = urlsplit(url).netloc.rpartition("@")[2]
    except ValueError:
        where = ""
    return f"the service at {where}" if where else "the service"


def in_words(message: str) -> str:
    """``message`` as a trader reads it on screen: each URL becomes "the service at <host>",
    and a word (or a few) repeated back to back is said once."""
    text = _URL.sub(lambda match: service_at(match.group()), message)
    text = text.replace("the service at the service at", "the service at")
    return _REPEATED.sub(r"\1", text)
