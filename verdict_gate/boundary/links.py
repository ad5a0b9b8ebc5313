"""Linked containers, both sides of them (docs/design.md §8.1, "a list, dict, set or bytearray handed to a
candidate call"): a container of the oracle's that candidate code holds on to (a cache it stores, a list a
lazy iterator reads) has a copy in the worker, and the two are kept in step before and after every frame.

Each side keeps one :class:`Links` table. A container travels by value with a link id (``{"lk": [id,
state]}`` the first time, ``{"lk": id}`` after); the state both sides last agreed on is kept as JSON text, so
a side sends a container's new state (``sync``) only when its encoding changed. The oracle *offers* a call's
arguments (linked only if the worker says it kept them: ``kept``) and *holds* a callback's result (linked at
once); the worker keeps an offered copy when candidate code holds more references to it after the call than
before, and lets a link go (``unlink``) when nothing of the candidate's holds it any more.

Part of the boundary package: standard library only, loaded by path on both sides (:mod:`.load`).
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable
from typing import Any

from . import codec
from .protocol import MAX_LINKED_ITEMS, MAX_LINKS, MAX_NESTED_LINKS

CONTAINERS = (list, dict, set, bytearray)  # what may be linked: mutable, and carried by value by the codec
Encode = Callable[[Any, bool], Any]  # a side's encoder: (value, whether the value itself may travel as a link)


class Links:
    """One side's linked containers.

    Attributes:
        values: link id → this side's container.
        ids: ``id(container)`` → its link id (the codec's ``links``).
        state: link id → the JSON text both sides last agreed on.
        seen: link id → its scalar items (:func:`.codec.scalar_items`) when that state was agreed, and the
            state's text: while they are the same objects, the container is unchanged without encoding it.
        offered: link id → a container handed over by the request in flight, linked only once kept.
        kept: the worker's: offered links candidate code kept, to tell the oracle with the next frame.
    """

    def __init__(self) -> None:
        self.values: dict[int, Any] = {}
        self.ids: dict[int, int] = {}
        self.state: dict[int, str] = {}
        self.seen: dict[int, tuple[list[Any], str]] = {}
        self.offered: dict[int, Any] = {}
        self.kept: list[int] = []
        self.next = 1

    def clear(self) -> None:
        """Forget every link (a new worker: none of them is held there)."""
        for table in (self.values, self.ids, self.state, self.seen, self.offered):
            table.clear()

    def link(self, lid: int, value: Any) -> None:
        self.values[lid], self.ids[id(value)] = value, lid

    def find(self, lid: Any) -> Any:
        """The container of link ``lid``, linked or offered (``None``: no such link here)."""
        return self.values.get(lid, self.offered.get(lid)) if type(lid) is int else None

    # -- both sides: a frame's ``sync`` ---------------------------------------------------------------

    def changes(self, encode: Encode, drop: bool = False) -> tuple[list[list[Any]], list[int]]:
        """``(changed, dropped)``: ``[[link id, new state], …]`` of every container whose encoding changed since
        its state was last agreed (the new state is agreed now), and, with ``drop`` (the worker), the links
        nothing but this table holds any more, let go (their last changes are in ``changed`` first)."""
        changed: list[list[Any]] = []
        dropped: list[int] = []
        for lid in list(self.values):
            value = self.values[lid]
            items, text = codec.scalar_items(value), self.state.get(lid)
            seen = self.seen.get(lid)
            if not (items is not None and seen is not None and text is not None and seen[1] is text
                    and codec.same_items(items, seen[0])):  # else the same scalars as last agreed: unchanged
                tree = encode(value, False)
                new = codec.dumps(tree)
                if new != text:
                    changed.append([lid, tree])
                    self.state[lid] = text = new
                if items is None:
                    self.seen.pop(lid, None)
                else:
                    self.seen[lid] = (items, text)
            if drop and sys.getrefcount(value) <= 3:  # the table, this name, the call: nothing of the candidate's
                del self.values[lid], self.ids[id(value)], self.state[lid]
                self.seen.pop(lid, None)
                dropped.append(lid)
        return changed, dropped

    def apply(self, sync: Iterable[Any] | None, decode: Callable[[Any], Any]) -> None:
        """The other side's new states (a frame's ``sync``), applied in place to this side's containers."""
        for lid, tree in sync or ():
            value = self.values.get(lid) if type(lid) is int else None
            if value is None:
                continue
            codec.replace_in_place(value, decode(tree))
            self.state[lid] = codec.dumps(tree)

    # -- the oracle's side --------------------------------------------------------------------------------

    def share(self, value: Any, held: bool, encode: Encode, fallback: codec.Fallback) -> Any:
        """The wire form of an oracle container handed to the worker: a call's argument (``held`` false:
        offered, linked if the worker keeps it) or a callback's result (``held``: linked at once, with the
        containers inside it, :meth:`nest`). Anything else, or a container over :data:`MAX_LINKED_ITEMS`, by
        value (``encode``)."""
        if type(value) not in CONTAINERS or len(value) > MAX_LINKED_ITEMS:
            return encode(value, True)
        lid = self.ids.get(id(value))
        if lid is not None and self.values.get(lid) is value:
            return {"lk": lid}
        lid = self.next
        self.next += 1
        if not held:  # an offered argument is linked when the worker says it kept it
            tree = encode(value, False)
            self.offered[lid] = value
            self.state[lid] = codec.dumps(tree)
            return {"lk": [lid, tree]}
        self.link(lid, value)
        nested = self.nest(value)
        try:
            tree = codec.encode(value, fallback, links=self.ids, top=False, fresh={id(child) for child in nested})
        except BaseException:  # nothing of it reached the worker: none of it is linked
            for child in (value, *nested):
                del self.values[self.ids.pop(id(child))]
            raise
        for child in nested:  # sent with their states inside; the state both sides agree on names them by id
            self.state[self.ids[id(child)]] = codec.dumps(encode(child, False))
        self.state[lid] = codec.dumps(encode(value, False) if nested else tree)
        return {"lk": [lid, tree]}

    def nest(self, value: Any) -> list[Any]:
        """Link the lists, dicts, sets and bytearrays inside a held container (``self.cache`` inside a test's
        instance's ``__dict__``), at most :data:`MAX_NESTED_LINKS`: each is then one object on each side, so
        a new state of the outer container leaves the inner ones the same objects (``is`` holds, and a
        reference the test kept sees the candidate's changes)."""
        nested: list[Any] = []
        todo = [value]
        while todo and len(nested) < MAX_NESTED_LINKS:
            items = todo.pop()
            for item in items.values() if type(items) is dict else items if type(items) is list else ():
                if type(item) in CONTAINERS and id(item) not in self.ids \
                        and len(item) <= MAX_LINKED_ITEMS and len(nested) < MAX_NESTED_LINKS:
                    lid = self.next
                    self.next += 1
                    self.link(lid, item)
                    nested.append(item)
                    todo.append(item)
        return nested

    def settle(self, before: set[int]) -> None:
        """After a call: the containers it offered that the worker kept are links now; the rest were only
        arguments (``before``: the offered ids before the call)."""
        for lid in set(self.offered) - before:
            value = self.offered.pop(lid)
            if self.values.get(lid) is not value:
                self.state.pop(lid, None)

    def heard(self, frame: dict[str, Any], decode: Callable[[Any], Any]) -> None:
        """The worker's word on linked containers: which it kept, their new states, then which it let go (its
        last changes first)."""
        for lid in frame.get("kept") or ():
            value = self.offered.get(lid) if type(lid) is int else None
            if value is not None:
                self.link(lid, value)
        self.apply(frame.get("sync"), decode)
        for lid in frame.get("unlink") or ():
            value = self.values.pop(lid, None) if type(lid) is int else None
            self.state.pop(lid, None)
            self.seen.pop(lid, None)
            if value is not None and self.ids.get(id(value)) == lid:
                del self.ids[id(value)]

    # -- the worker's side --------------------------------------------------------------------------------

    def receive(self, p: Any, decode: Callable[[Any], Any], encode: Encode, held: bool) -> Any:
        """The worker's copy of a linked container the oracle sent (``p``: a link id, or ``[id, state]`` the
        first time): a callback's result (``held``) is linked at once, a call's argument offered."""
        if type(p) is int:
            found = self.values.get(p, self.offered.get(p))
            if found is None:
                raise codec.ProtocolError("a linked container this worker does not hold")
            return found
        lid, tree = int(p[0]), p[1]
        before = len(self.values)
        copy_ = decode(tree)
        nested = len(self.values) > before  # links inside it, sent with their states
        if type(copy_) not in CONTAINERS:
            raise codec.ProtocolError("a link to something that is not a container")
        if held:  # a callback's result: linked at once (the oracle did so too)
            self.link(lid, copy_)
        else:
            self.offered[lid] = copy_
        # With links nested inside, the state both sides agree on names them by id.
        self.state[lid] = codec.dumps(encode(copy_, False) if nested else tree)
        return copy_

    def counts(self) -> dict[int, int]:
        """The reference count of each offered copy, before a call (:meth:`keep` compares after it)."""
        return {lid: sys.getrefcount(c) for lid, c in self.offered.items()}

    def keep(self, base: dict[int, int]) -> None:
        """After a call: the copies it was handed that candidate code now holds more references to (it stored
        one, returned it, a lazy iterator reads it) stay linked; the rest were only arguments."""
        for lid, copy_ in self.offered.items():
            if sys.getrefcount(copy_) > base[lid] and len(self.values) < MAX_LINKS:
                self.link(lid, copy_)
                self.kept.append(lid)
            elif lid not in self.values:
                self.state.pop(lid, None)
        self.offered = {}
