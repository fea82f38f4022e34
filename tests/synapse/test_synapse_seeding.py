"""Cold-start priors (structural edges, bundles, git co-change), export, and branch namespaces,
with a real git repository in a temp directory."""

from __future__ import annotations

import json
import math
import os
import subprocess
from pathlib import Path

import pytest
from synapse_testkit import DAY, T0

from neuralmind import config
from neuralmind.synapse.layer import SynapseLayer
from neuralmind.synapse.seeding import structural_weight


def shared(layer: SynapseLayer, a: str, b: str, now: float = T0) -> float:
    return dict(layer.neighbors(a, k=100, namespaces=["shared"], now=now)).get(b, 0.0)


def test_structural_edges_fold_to_files_with_log_scaled_weights(layer):
    edges = [("a.py::f", "b.py::g", 3), ("a.py::h", "b.py", 1),   # a-b: 4 relations
             ("a.py::f", "a.py::h", 7),                            # same file: skipped
             ("c.py", "a.py::f", 1000)]
    assert layer.seed_structural(edges, now=T0) == 2
    assert shared(layer, "a.py", "b.py") == pytest.approx(
        config.STRUCTURAL_BASE + config.STRUCTURAL_LOG_SCALE * math.log(5))
    assert shared(layer, "a.py", "c.py") == pytest.approx(config.STRUCTURAL_MAX)
    assert layer.neighbors("a.py", namespaces=["personal"], now=T0) == []
    # merged read: shared contributes at 0.5
    assert dict(layer.neighbors("a.py", now=T0))["b.py"] == pytest.approx(0.5 * structural_weight(4))
    assert layer.stats(now=T0)["structural_edges"] == 2


def test_structural_seeding_is_idempotent_and_never_ltp(layer):
    edges = [("a.py::f", "b.py::g", 2)]
    layer.seed_structural(edges, now=T0)
    first = layer.store.dump(now=T0)
    for _ in range(config.LTP_THRESHOLD + 2):
        assert layer.seed_structural(edges, now=T0) == 0
    assert layer.store.dump(now=T0) == first
    assert layer.stats(now=T0)["ltp"] == 0
    # a rebuild after a while refreshes the decayed prior to its seeded value
    later = T0 + 60 * DAY
    assert shared(layer, "a.py", "b.py", later) == pytest.approx(structural_weight(2) / 2)
    layer.seed_structural(edges, now=later)
    assert shared(layer, "a.py", "b.py", later) == pytest.approx(structural_weight(2))


def test_bundle_seeding_uses_max_semantics(layer, tmp_path):
    layer.activate(["a.py", "b.py"], namespace="shared", now=T0)          # 0.3
    for _ in range(3):
        layer.activate(["c.py", "d.py"], namespace="shared", now=T0)      # 0.657
    bundle = tmp_path / "bundle.json"
    bundle.write_text(json.dumps({"synapses": [
        {"a": "a.py", "b": "b.py", "weight": 0.9},
        ["d.py", "c.py", 0.4],
        {"node_a": "e.py", "node_b": "f.py", "weight": 0.5},
        {"a": "e.py", "b": "f.py", "weight": 0.2},
    ]}))
    assert layer.seed_bundle(bundle, now=T0) == 1
    assert shared(layer, "a.py", "b.py") == pytest.approx(0.9)
    assert shared(layer, "c.py", "d.py") == pytest.approx(1 - 0.7 ** 3)
    assert shared(layer, "e.py", "f.py") == pytest.approx(0.5)
    before = layer.store.dump(now=T0)
    assert layer.seed_bundle(bundle, now=T0) == 0
    assert layer.store.dump(now=T0) == before


@pytest.mark.parametrize("content, msg", [
    ("{not json", "not valid JSON"),
    ('{"format": "other"}', "not a synapse bundle"),
    ('{"synapses": [["a.py", "a.py", 0.5]]}', "two different node ids"),
    ('{"synapses": [["a.py", "b.py", -1]]}', "positive number"),
    ('"text"', "JSON object"),
])
def test_malformed_bundles_are_refused_or_skipped(layer, tmp_path, content, msg):
    bad = tmp_path / "bad.json"
    bad.write_text(content)
    with pytest.raises(ValueError, match=msg):
        layer.import_bundle(bad)
    assert layer.seed_bundle(bad) == 0  # the build path fails open
    assert layer.seed_bundle(tmp_path / "missing.json") == 0


def test_bundle_export_import_round_trip(layer, tmp_path, clock):
    layer.activate(["a.py", "b.py", "c.py"], now=T0)
    layer.activate(["a.py", "b.py"], namespace="ephemeral", now=T0)
    layer.activate_files(["x.py", "y.py"], now=T0)
    path = layer.export_bundle(tmp_path / "out.json", now=T0)
    doc = json.loads(path.read_text())
    assert doc["format"] == "neuralmind-synapses"
    assert {s["namespace"] for s in doc["synapses"]} == {"personal"}  # ephemeral stays local
    other = SynapseLayer(tmp_path / "other" / ".neuralmind", tmp_path / "other", clock=clock)
    assert other.import_bundle(path, now=T0) == 4
    assert shared(other, "a.py", "b.py") == pytest.approx(config.LEARNING_RATE)
    assert other.next_likely("x.py", now=T0) == [("y.py", pytest.approx(1.0))]
    other.close()


def test_memory_export_is_valid_when_empty_and_tags_ltp(layer):
    path = layer.export_memory(now=T0)
    assert path == layer.state_dir / "SYNAPSE_MEMORY.md"
    text = path.read_text()
    assert text.startswith("# Synapse memory")
    assert "No associations learned yet." in text and "No transitions learned yet." in text
    for _ in range(config.LTP_THRESHOLD):
        layer.activate_files(["a.py", "b.py"], now=T0)
    text = layer.export_memory(now=T0).read_text()
    assert "`a.py` <-> `b.py`" in text and "[LTP]" in text
    assert "after `a.py`: `b.py` (100%)" in text


# --- git ------------------------------------------------------------------------------------
def git(root: Path, *args: str) -> str:
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com",
           "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.com",
           "GIT_CONFIG_GLOBAL": "/dev/null", "GIT_CONFIG_SYSTEM": "/dev/null"}
    return subprocess.run(["git", "-C", str(root), *args], check=True, capture_output=True,
                          text=True, env=env).stdout


def commit(root: Path, files: dict[str, str], msg: str) -> None:
    for name, text in files.items():
        p = root / name
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", msg)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    commit(root, {"a.py": "1", "b.py": "1", "gone.py": "1"}, "one")
    commit(root, {"a.py": "2", "b.py": "2"}, "two")
    commit(root, {"a.py": "3", "c.py": "3", "gone.py": "3"}, "three")
    commit(root, {f"big/f{i}.py": "x" for i in range(config.COCHANGE_MAX_FILES + 1)}, "huge")
    commit(root, {"a.py": "4", "vendor/lib.py": "4"}, "vendored copy")
    git(root, "rm", "-q", "gone.py")
    git(root, "commit", "-q", "-m", "drop gone")
    return root


def test_cochange_is_mined_from_a_real_git_history(repo, clock):
    layer = SynapseLayer(repo / ".neuralmind", repo, clock=clock)
    # a-b (2 commits), a-c (1); deleted gone.py, the huge commit and vendor/ are skipped
    assert layer.seed_cochange(now=T0) == 2
    assert shared(layer, "a.py", "b.py") == pytest.approx(structural_weight(2))
    assert shared(layer, "a.py", "c.py") == pytest.approx(structural_weight(1))
    assert all(not n.startswith(("gone", "big/", "vendor/")) for n, _ in layer.neighbors("a.py", 50, now=T0))
    assert layer.next_likely_file("b.py", k=3, now=T0)[0][0] == "a.py"
    assert layer.seed_cochange(now=T0) == 0  # idempotent
    assert (repo / ".neuralmind" / ".gitignore").read_text() == "*\n"  # state is never committed
    layer.close()


def test_cochange_fails_open_outside_git(layer):
    assert layer.seed_cochange(now=T0) == 0


def test_active_namespace_follows_the_git_branch(repo, clock):
    layer = SynapseLayer(repo / ".neuralmind", repo, clock=clock)
    assert layer.namespace == "personal"
    git(repo, "checkout", "-q", "-b", "feature/login")
    assert layer.namespace == "branch:feature/login"
    layer.activate(["a.py", "b.py"], now=T0)
    assert layer.stats(now=T0)["namespaces"]["branch:feature/login"]["synapses"] == 1
    git(repo, "checkout", "-q", "main")
    assert layer.namespace == "personal"
    # branch-local learning is invisible from main's merged view
    assert layer.neighbors("a.py", now=T0) == []
    git(repo, "checkout", "-q", "--detach")
    assert layer.namespace == "personal"
    layer.close()
