"""The CLI's own error: bad input from the user, printed as one line with exit 2.

It lives apart from `main.py` so that `python -m neuralmind.cli.main` and the
console script raise and catch the same class.
"""

from __future__ import annotations


class UsageError(Exception):
    """Bad input from the user: printed as one line, exit 2."""
