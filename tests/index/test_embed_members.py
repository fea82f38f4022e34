"""`NodeTextOptions.embed_members`: which members get a vector (config EMBED_MEMBERS).

A real workspace (parser, model, BM25, vectors on disk): members left without a vector
are neither embedded nor pending, and are still found by name and by keyword, their
files ranked; changing the option on a built index drops the vectors it no longer wants.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from neuralmind.engine import Workspace
from neuralmind.index.node_text import DEFAULT_TEXT

FILES = {
    "shop/cart.py": '''"""Shopping carts."""


class Cart:
    """Holds the items a customer is about to buy."""

    def add_item(self, sku, quantity):
        """Put a quantity of one product into the cart."""
        self.items[sku] = self.items.get(sku, 0) + quantity

    def apply_voucher_discount(self, voucher):
        self.total -= voucher.amount_off(self.total)
''',
    "shop/shipping.py": '''"""Shipping."""


def parcel_weight(items):
    """Total weight of the parcel in grams."""
    return sum(i.grams for i in items)


class Courier:
    """Books pickups with the delivery company."""

    def schedule_pickup(self, parcel):
        return self.api.book(parcel.address)
''',
}
MEMBERS = {"shop/cart.py::Cart.add_item", "shop/cart.py::Cart.apply_voucher_discount",
           "shop/shipping.py::Courier.schedule_pickup"}


def built(root: Path) -> Workspace:
    for rel, text in FILES.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
    ws = Workspace(root)
    ws.build()
    return Workspace(root)      # what is on disk


def vector_ids(ws: Workspace) -> set[str]:
    return set(ws.index._vectors.ids())


@pytest.mark.parametrize("choice, embedded", [
    ("none", set()),
    ("documented", {"shop/cart.py::Cart.add_item"}),
    ("all", MEMBERS),
])
def test_members_embedded_per_option(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                     choice: str, embedded: set[str]) -> None:
    monkeypatch.setattr(DEFAULT_TEXT, "embed_members", choice)
    ws = built(tmp_path)
    have = vector_ids(ws)
    assert have & MEMBERS == embedded
    # files and top-level symbols keep theirs whatever the option
    assert {"shop/cart.py", "shop/shipping.py", "shop/cart.py::Cart",
            "shop/shipping.py::parcel_weight", "shop/shipping.py::Courier"} <= have
    assert ws.index.pending == 0           # nothing waits for a vector it will never get
    assert ws.index.node_count > len(have) or choice == "all"


def test_members_without_vectors_found_by_name_and_keyword(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(DEFAULT_TEXT, "embed_members", "none")
    ws = built(tmp_path)
    assert "shop/shipping.py::Courier.schedule_pickup" not in vector_ids(ws)
    hits, mode, _ = ws.search("schedule_pickup", k=5)
    assert mode == "hybrid"
    assert hits[0].node.id == "shop/shipping.py::Courier.schedule_pickup"
    # a word only the member's name and body hold: keyword search finds it, its file ranks
    hits, _, _ = ws.search("voucher discount", k=5)
    assert "shop/cart.py::Cart.apply_voucher_discount" in [h.node.id for h in hits]
    result = ws.query("where is the voucher discount applied?", budget=400)
    assert result.files[0].file == "shop/cart.py"


def test_option_changed_on_a_built_index_drops_member_vectors(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ws = built(tmp_path)
    assert vector_ids(ws) >= MEMBERS
    monkeypatch.setattr(DEFAULT_TEXT, "embed_members", "none")
    ws.build()
    again = Workspace(tmp_path)
    assert vector_ids(again) & MEMBERS == set()     # dropped, and written to disk
    assert "shop/cart.py::Cart" in vector_ids(again)
    monkeypatch.setattr(DEFAULT_TEXT, "embed_members", "all")
    again.build()
    assert vector_ids(Workspace(tmp_path)) >= MEMBERS
