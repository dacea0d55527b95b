"""A local web table: play against the bots and trained agents, or watch recorded games.

``domino-serve`` (``python -m agents.web``) starts it on http://127.0.0.1:8000;
``server`` is the app, ``state`` the games and what a page may see of them, ``sessions``
who holds them and where they are kept, ``workers`` where the opponents think, ``static/``
the page itself (plain HTML, JavaScript and CSS, no build step). Needs the ``web`` extra.
"""
