"""Hebbian rules with exact expected weights: reinforcement, decay, LTP, pruning, namespaces,
spreading activation, transitions and negative feedback."""

from __future__ import annotations

import math

import pytest
from synapse_testkit import DAY, T0

from neuralmind import config
from neuralmind.synapse.layer import SynapseLayer
from neuralmind.synapse.namespaces import merged_weights, normalize_namespace

LR = config.LEARNING_RATE


def weight(layer: SynapseLayer, a: str, b: str, now: float = T0, ns: str | None = None) -> float:
    nbrs = dict(layer.neighbors(a, k=1000, namespaces=[ns] if ns else None, now=now))
    return nbrs.get(b, 0.0)


def test_first_activation_is_the_learning_rate_and_repeats_approach_the_cap(layer):
    assert layer.activate(["a.py", "b.py", "c.py"], now=T0) == 3
    assert weight(layer, "a.py", "b.py") == pytest.approx(LR)
    layer.activate(["a.py", "b.py"], now=T0)
    assert weight(layer, "a.py", "b.py") == pytest.approx(LR + LR * (1 - LR))  # 0.51
    assert weight(layer, "a.py", "c.py") == pytest.approx(LR)  # untouched pair unchanged
    for _ in range(50):
        layer.activate(["a.py", "b.py"], now=T0)
    w = weight(layer, "a.py", "b.py")
    assert 0.999 < w <= config.WEIGHT_CAP


def test_pairs_are_canonical_whatever_the_order(layer):
    layer.activate(["b.py", "a.py"], now=T0)
    layer.activate(["a.py", "b.py"], now=T0)
    assert weight(layer, "b.py", "a.py") == pytest.approx(0.51)
    assert layer.stats(now=T0)["synapses"] == 1


@pytest.mark.parametrize("ns, days", [("personal", 30.0), ("shared", 60.0), ("ephemeral", 1.0),
                                      ("branch:feature", 30.0)])
def test_decay_at_one_half_life_is_exactly_half(layer, ns, days):
    layer.activate(["a.py", "b.py"], namespace=ns, now=T0)
    assert weight(layer, "a.py", "b.py", T0 + days * DAY, ns) == pytest.approx(LR / 2, rel=1e-12)
    assert weight(layer, "a.py", "b.py", T0 + 2 * days * DAY, ns) == pytest.approx(LR / 4, rel=1e-12)


def test_decay_is_lazy_and_one_way(layer):
    layer.activate(["a.py", "b.py"], now=T0)
    later = T0 + 30 * DAY
    assert weight(layer, "a.py", "b.py", later) == pytest.approx(0.15)
    assert weight(layer, "a.py", "b.py", later) == pytest.approx(0.15)  # reading changes nothing
    # An event stamped before the last write neither decays "backwards" nor re-inflates.
    layer.activate(["a.py", "b.py"], now=T0 - 10 * DAY)
    assert weight(layer, "a.py", "b.py", T0) == pytest.approx(0.51)
    assert weight(layer, "a.py", "b.py", later) == pytest.approx(0.255)
    # Reinforcing after decay starts from the decayed weight.
    layer.activate(["a.py", "b.py"], now=later)
    assert weight(layer, "a.py", "b.py", later) == pytest.approx(0.255 + LR * (1 - 0.255))


def test_decay_pass_prunes_what_decay_took_below_the_threshold(layer):
    layer.activate(["a.py", "b.py"], now=T0)
    for _ in range(5):
        layer.activate(["c.py", "d.py"], now=T0)
    before = weight(layer, "c.py", "d.py", T0 + 45 * DAY)
    removed = layer.decay_pass(now=T0 + 45 * DAY)
    assert removed == {"synapses": 0, "transitions": 0, "activations": 0}
    assert weight(layer, "a.py", "b.py", T0 + 45 * DAY) == pytest.approx(LR * 0.5 ** 1.5, rel=1e-9)
    assert weight(layer, "c.py", "d.py", T0 + 45 * DAY) == pytest.approx(before, rel=1e-9)
    assert weight(layer, "a.py", "b.py", T0 + 75 * DAY) == pytest.approx(LR * 0.5 ** 2.5, rel=1e-9)
    # 0.3 * 2^-(days/30) < 0.01 after ~147 days: the pair is pruned and never comes back.
    removed = layer.decay_pass(now=T0 + 150 * DAY)
    assert removed["synapses"] == 1
    assert weight(layer, "a.py", "b.py", T0 + 150 * DAY) == 0.0
    assert weight(layer, "a.py", "b.py", T0 + 151 * DAY) == 0.0
    assert weight(layer, "c.py", "d.py", T0 + 150 * DAY) > config.LTP_FLOOR  # LTP survives


def test_ltp_decays_slower_and_never_below_its_floor(layer):
    for _ in range(config.LTP_THRESHOLD):
        layer.activate(["a.py", "b.py"], now=T0)
    w0 = 1 - (1 - LR) ** config.LTP_THRESHOLD
    assert weight(layer, "a.py", "b.py") == pytest.approx(w0)
    slow = 30 * config.LTP_HALF_LIFE_FACTOR * DAY  # one LTP half-life
    assert weight(layer, "a.py", "b.py", T0 + slow) == pytest.approx(w0 / 2)
    assert weight(layer, "a.py", "b.py", T0 + 3650 * DAY) == pytest.approx(config.LTP_FLOOR)
    layer.decay_pass(now=T0 + 3650 * DAY)
    layer.prune(now=T0 + 3650 * DAY, older_than_days=1)
    assert weight(layer, "a.py", "b.py", T0 + 3650 * DAY) == pytest.approx(config.LTP_FLOOR)
    # one activation short of LTP: an ordinary edge, gone after ten years
    for _ in range(config.LTP_THRESHOLD - 1):
        layer.activate(["c.py", "d.py"], now=T0)
    assert weight(layer, "c.py", "d.py", T0 + 3650 * DAY) == 0.0


def test_prune_removes_weak_and_stale_edges_only(layer):
    layer.activate(["a.py", "b.py"], now=T0)
    layer.activate(["c.py", "d.py"], now=T0 + 20 * DAY)
    for _ in range(config.LTP_THRESHOLD):
        layer.activate(["e.py", "f.py"], now=T0)
    assert layer.prune(now=T0 + 21 * DAY)["synapses"] == 0
    out = layer.prune(now=T0 + 21 * DAY, older_than_days=10)
    assert out["synapses"] == 1  # a-b is stale; c-d is recent; e-f is LTP-protected
    assert weight(layer, "a.py", "b.py", T0 + 21 * DAY) == 0.0
    assert weight(layer, "c.py", "d.py", T0 + 21 * DAY) > 0
    assert weight(layer, "e.py", "f.py", T0 + 21 * DAY) > 0


def test_merged_reads_weigh_active_personal_and_shared(tmp_path, clock):
    lay = SynapseLayer(tmp_path / ".neuralmind", tmp_path, clock=clock)
    for ns in ("personal", "shared", "ephemeral"):
        lay.activate(["a.py", "b.py"], namespace=ns, now=T0)
    # on the default branch the active namespace is personal: 1.0 * 0.3 + 0.5 * 0.3
    assert weight(lay, "a.py", "b.py") == pytest.approx(1.0 * LR + 0.5 * LR)
    assert weight(lay, "a.py", "b.py", ns="shared") == pytest.approx(LR)  # raw, no multiplier
    lay.close()
    br = SynapseLayer(tmp_path / ".neuralmind", tmp_path, clock=clock, namespace="branch:topic")
    br.activate(["a.py", "b.py"], now=T0)
    assert br.namespace == "branch:topic"
    assert weight(br, "a.py", "b.py") == pytest.approx(1.0 * LR + 0.8 * LR + 0.5 * LR)
    br.close()
    assert merged_weights("personal") == {"personal": 1.0, "shared": 0.5}


@pytest.mark.parametrize("bad", ["", "  ", "two words", "tab\there", "branch:", "x" * 201])
def test_namespace_names_are_single_tokens(bad, layer):
    with pytest.raises(ValueError):
        normalize_namespace(bad)
    with pytest.raises(ValueError):
        layer.activate(["a.py", "b.py"], namespace=bad)


def test_spread_decays_per_hop_and_excludes_seeds(layer):
    layer.activate(["a.py", "b.py"], now=T0)          # a-b 0.3
    layer.activate(["b.py", "c.py"], now=T0)          # b-c 0.3
    layer.activate(["b.py", "c.py"], now=T0)          # b-c 0.51
    got = dict(layer.spread(["a.py"], depth=2, top_k=10, now=T0))
    d = config.SPREAD_DECAY
    # hop 1: b gets 0.6*0.3; hop 2: c gets 0.18*0.6*0.51 (a is a seed and receives nothing)
    assert got == pytest.approx({"b.py": d * LR, "c.py": d * LR * d * 0.51})
    assert "a.py" not in got
    assert dict(layer.spread(["a.py"], depth=1, top_k=10, now=T0)) == pytest.approx({"b.py": d * LR})
    assert layer.spread(["nowhere.py"], now=T0) == []


def test_spread_detailed_splits_energy_by_namespace(layer):
    layer.activate(["a.py", "b.py"], now=T0)                       # personal 0.3 (x1.0)
    layer.activate(["a.py", "b.py"], namespace="shared", now=T0)   # shared 0.3 (x0.5)
    layer.activate(["a.py", "c.py"], namespace="shared", now=T0)
    got = {n: (e, parts) for n, e, parts in layer.spread_detailed(["a.py"], depth=1, now=T0)}
    d = config.SPREAD_DECAY
    assert got["b.py"][0] == pytest.approx(d * (LR + 0.5 * LR))
    assert got["b.py"][1] == pytest.approx({"personal": d * LR, "shared": d * 0.5 * LR})
    assert got["c.py"][1] == pytest.approx({"shared": d * 0.5 * LR})
    assert [(n, e) for n, e, _ in layer.spread_detailed(["a.py"], now=T0)] == layer.spread(["a.py"], now=T0)


def test_spread_from_a_symbol_also_seeds_its_file(layer):
    layer.activate(["pkg/a.py", "pkg/b.py"], now=T0)
    got = dict(layer.spread(["pkg/a.py::Parser.parse"], depth=1, top_k=5, now=T0))
    assert got == pytest.approx({"pkg/b.py": config.SPREAD_DECAY * LR})


def test_hub_nodes_divide_their_outgoing_energy_by_degree(layer):
    spokes = [f"s{i:02}.py" for i in range(config.HUB_DEGREE + 1)]
    for s in spokes:
        layer.activate(["hub.py", s], now=T0)
    got = dict(layer.spread(["hub.py"], depth=1, top_k=50, now=T0))
    deg = len(spokes)
    assert got["s00.py"] == pytest.approx(config.SPREAD_DECAY * LR / deg)
    # a node at exactly HUB_DEGREE is not a hub
    small = [f"t{i:02}.py" for i in range(config.HUB_DEGREE)]
    for s in small:
        layer.activate(["center.py", s], now=T0)
    got = dict(layer.spread(["center.py"], depth=1, top_k=50, now=T0))
    assert got["t00.py"] == pytest.approx(config.SPREAD_DECAY * LR)


def test_next_likely_is_a_distribution_over_transitions(layer):
    layer.store.record_transitions([("a.py", "b.py"), ("a.py", "b.py"), ("a.py", "c.py"),
                                    ("a.py", "d.py"), ("b.py", "a.py")], "personal", T0)
    dist = layer.next_likely("a.py", k=10, now=T0)
    assert dist == [("b.py", pytest.approx(0.5)), ("c.py", pytest.approx(0.25)),
                    ("d.py", pytest.approx(0.25))]
    assert sum(p for _, p in dist) == pytest.approx(1.0)
    assert [f for f, _ in layer.next_likely("a.py", k=1, now=T0)] == ["b.py"]
    # transitions decay at their own, slower half-life
    layer.store.record_transitions([("x.py", "y.py")], "personal", T0)
    w = layer.store.transitions_from("x.py", {"personal": 1.0}, T0 + config.TRANSITION_HALF_LIFE_DAYS * DAY)
    assert w == {"y.py": pytest.approx(0.5)}


def test_next_likely_file_mixes_signals_into_probabilities(layer):
    layer.activate_files(["a.py", "b.py"], now=T0)
    layer.activate_files(["a.py", "c.py"], now=T0)
    layer.activate_files(["a.py", "c.py"], now=T0)
    preds = layer.next_likely_file("a.py", k=10, now=T0)
    assert [f for f, _ in preds] == ["c.py", "b.py"]
    assert sum(p for _, p in preds) == pytest.approx(1.0)
    assert all(f != "a.py" for f, _ in preds)
    assert layer.next_likely_file("unknown.py", k=5, now=T0)[0][0] == "a.py"  # popularity prior


def test_negative_feedback_weakens_but_never_deletes_ltp_edges(layer):
    layer.activate(["n.py", "x.py"], now=T0)
    for _ in range(config.LTP_THRESHOLD):
        layer.activate(["n.py", "y.py"], now=T0)
    ltp = weight(layer, "n.py", "y.py")
    layer.feedback("n.py", positive=False, now=T0)
    f = config.NEGATIVE_FEEDBACK_FACTOR
    assert weight(layer, "n.py", "x.py") == pytest.approx(LR * f)
    assert weight(layer, "n.py", "y.py") == pytest.approx(max(config.LTP_FLOOR, ltp * f))
    for _ in range(20):
        layer.feedback("n.py", positive=False, now=T0)
    assert weight(layer, "n.py", "x.py") == 0.0  # weak ordinary edge pruned
    assert weight(layer, "n.py", "y.py") == pytest.approx(config.LTP_FLOOR)
    assert layer.stats(now=T0)["ltp"] == 1


def test_positive_feedback_reinforces_node_with_its_context(layer):
    layer.feedback("a.py::f", positive=True, context=["b.py::g", "c.py"], now=T0)
    assert weight(layer, "a.py::f", "b.py::g") == pytest.approx(LR)
    assert weight(layer, "b.py::g", "c.py") == pytest.approx(LR)


def test_structural_weight_formula():
    from neuralmind.synapse.seeding import structural_weight

    assert structural_weight(1) == pytest.approx(config.STRUCTURAL_BASE + config.STRUCTURAL_LOG_SCALE * math.log(2))
    assert structural_weight(10_000) == config.STRUCTURAL_MAX
