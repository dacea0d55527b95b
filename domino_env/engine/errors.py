"""Exceptions shared by the engines and the records layer."""


class IllegalMoveError(ValueError):
    """A move or action that the rules do not allow in the current position.

    The message names the move, the seat to play and its legal moves.
    """
