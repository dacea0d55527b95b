"""Values shown in error messages: bounded however large or deeply shared the value is."""

from __future__ import annotations

import reprlib
from typing import Any

_BRIEF = reprlib.Repr()
_BRIEF.maxlevel, _BRIEF.maxlist, _BRIEF.maxtuple, _BRIEF.maxdict, _BRIEF.maxset = 3, 6, 6, 6, 6
_BRIEF.maxstring, _BRIEF.maxother, _BRIEF.maxlong = 60, 60, 60


def brief(value: Any, limit: int = 80) -> str:
    """``repr(value)`` cut to ``limit`` characters, built without ever expanding the whole value.

    A plain ``repr`` of a list nested through shared references (a YAML alias, a crafted
    checkpoint) writes every copy: gigabytes for a file of a few hundred bytes. ``reprlib`` stops
    at a few levels and items; an integer too long to print is named by its size.
    """
    try:
        text = _BRIEF.repr(value)
    except ValueError:  # an int of more than 4,300 digits (sys.get_int_max_str_digits)
        if isinstance(value, int):
            return f"an integer of {value.bit_length()} bits"
        return f"a {type(value).__name__} holding an integer too long to print"
    return text if len(text) <= limit else text[: limit - 3] + "..."
