"""Louvain communities: the algorithm on known graphs, and naming on a real extracted repo."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from neuralmind.config import WorkspaceConfig
from neuralmind.graph.build import GraphBuilder
from neuralmind.graph.communities import detect_communities, louvain, modularity


def undirected(edges: list[tuple[int, int, float]], n: int) -> list[dict[int, float]]:
    adj: list[dict[int, float]] = [{} for _ in range(n)]
    for i, j, w in edges:
        adj[i][j] = adj[i].get(j, 0.0) + w
        adj[j][i] = adj[j].get(i, 0.0) + w
    return adj


def cliques(k: int, size: int) -> list[dict[int, float]]:
    """k cliques of `size` nodes in a ring, joined by one weak edge each."""
    edges = [(c * size + a, c * size + b, 1.0)
             for c in range(k) for a in range(size) for b in range(a + 1, size)]
    edges += [(c * size, ((c + 1) % k) * size + 1, 0.1) for c in range(k)]
    return undirected(edges, k * size)


def test_ring_of_cliques_is_split_into_its_cliques() -> None:
    adj = cliques(6, 5)
    membership = louvain(adj)
    groups = {}
    for node, c in enumerate(membership):
        groups.setdefault(c, set()).add(node)
    assert sorted(map(sorted, groups.values())) == [list(range(c * 5, c * 5 + 5)) for c in range(6)]
    assert modularity(adj, membership) > 0.75


def test_same_graph_same_partition_and_seed_is_used() -> None:
    rng = random.Random(7)
    edges = [(rng.randrange(200), rng.randrange(200), 1.0) for _ in range(600)]
    adj = undirected([(i, j, w) for i, j, w in edges if i != j], 200)
    a, b = louvain(adj, seed=42), louvain(adj, seed=42)
    assert a == b
    assert modularity(adj, a) > 0.3
    singletons = list(range(200))
    assert modularity(adj, a) > modularity(adj, singletons)


def test_empty_and_edgeless_graphs() -> None:
    assert louvain([]) == []
    assert louvain([{}, {}, {}]) == [0, 1, 2]


def test_matches_networkx_modularity_on_a_random_graph() -> None:
    nx = pytest.importorskip("networkx")
    from networkx.algorithms.community import louvain_communities

    rng = random.Random(3)
    n = 300
    # planted partition: 10 groups, dense inside, sparse across
    edges = []
    for _ in range(2500):
        g = rng.randrange(10)
        edges.append((g * 30 + rng.randrange(30), g * 30 + rng.randrange(30), 1.0))
    for _ in range(300):
        edges.append((rng.randrange(n), rng.randrange(n), 1.0))
    adj = undirected([(i, j, w) for i, j, w in edges if i != j], n)
    ours = modularity(adj, louvain(adj))
    G = nx.Graph()
    for i, nbrs in enumerate(adj):
        for j, w in nbrs.items():
            G.add_edge(i, j, weight=w)
    theirs_sets = louvain_communities(G, weight="weight", seed=42)
    theirs = [0] * n
    for k, members in enumerate(theirs_sets):
        for i in members:
            theirs[i] = k
    assert ours >= modularity(adj, theirs) - 0.01


REPO = {
    "shop/__init__.py": '"""Shop: carts, orders and payments."""\n',
    "shop/cart.py": (
        '"""Shopping carts."""\nfrom shop.pricing import price, discount\n\n\n'
        "class Cart:\n    def total(self):\n        return price(1) - discount(1)\n"
    ),
    "shop/pricing.py": (
        '"""shop.pricing\n~~~~~~~~~~~~\n\nPrices and discounts. Details follow."""\n\n\ndef price(x):\n    """Price of x."""\n    return x\n\n\n'
        "def discount(x):\n    return price(x) / 10\n"
    ),
    "shop/order.py": (
        "from shop.cart import Cart\nfrom shop.pricing import price\n\n\n"
        "def checkout():\n    return Cart().total() + price(2)\n"
    ),
    "auth/users.py": (
        '"""User accounts."""\nfrom auth.tokens import issue\n\n\n'
        "class User:\n    def login(self):\n        return issue(self)\n"
    ),
    "auth/tokens.py": '"""Session tokens."""\n\n\ndef issue(user):\n    return str(user)\n',
    "auth/session.py": (
        "from auth.tokens import issue\nfrom auth.users import User\n\n\n"
        "def start():\n    return issue(User())\n"
    ),
    "tests/test_shop.py": (
        "from shop.pricing import price, discount\nfrom shop.cart import Cart\n\n\n"
        "def test_all():\n    assert price(1) and discount(1) and Cart().total()\n\n\n"
        "def test_more():\n    assert test_all() or price(2) or discount(3)\n"
    ),
    "scripts/one.py": "def lonely():\n    return 1\n",
    "scripts/two.py": "def alone():\n    return 2\n",
}


def test_communities_of_a_real_repo_are_named_and_described(tmp_path: Path) -> None:
    for rel, text in REPO.items():
        p = tmp_path / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)
    g = GraphBuilder(tmp_path, WorkspaceConfig()).build().graph
    by_file = {f: c for c in g.communities for f in c.files}
    assert by_file["shop/cart.py"] is by_file["shop/pricing.py"] is by_file["shop/order.py"]
    assert by_file["auth/users.py"] is by_file["auth/tokens.py"] is by_file["auth/session.py"]
    assert by_file["shop/cart.py"] is not by_file["auth/users.py"]
    # isolated scripts share one directory community instead of one each
    assert by_file["scripts/one.py"] is by_file["scripts/two.py"]
    shop = by_file["shop/pricing.py"]
    assert shop.name.startswith("shop/ (")
    assert by_file["tests/test_shop.py"] is shop
    assert shop.top_symbols[0] == "shop/pricing.py::price"        # most called
    assert not any(s.startswith("tests/") for s in shop.top_symbols[:3])   # tests rank last
    assert shop.description == "Prices and discounts."     # reST title dropped, 1st sentence
    assert shop.name == "shop/ (price, discount, Cart)"
    assert by_file["auth/tokens.py"].name.startswith("auth/ (")
    assert by_file["scripts/one.py"].name.startswith("scripts/")
    assert [c.id for c in g.communities] == list(range(len(g.communities)))
    assert all(c.size == sum(len(g.nodes_by_file(f)) for f in c.files) for c in g.communities)
    for n in g.nodes.values():
        assert g.communities[n.community] is by_file[n.file]
    before = [(c.name, c.files, c.top_symbols, c.description) for c in g.communities]
    detect_communities(g)
    assert [(c.name, c.files, c.top_symbols, c.description) for c in g.communities] == before
