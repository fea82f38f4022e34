"""`neuralmind team ...` end to end: real git clones, a real PostgreSQL, the real CLI."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tomllib
from pathlib import Path

import psycopg
from conftest import clone
from sample_workspace import git

from neuralmind.team.pg_schema import SCHEMA

CLI = [sys.executable, "-m", "neuralmind.cli.main"]


def nm(*args: str, cwd: Path, env: dict[str, str] | None = None,
       ok: bool = True) -> subprocess.CompletedProcess[str]:
    full_env = {k: v for k, v in os.environ.items() if k != "NEURALMIND_TEAM_DSN"}
    full_env.update(env or {})
    out = subprocess.run([*CLI, *args], cwd=cwd, env=full_env, capture_output=True, text=True,
                         timeout=300)
    if ok:
        assert out.returncode == 0, out.stderr
    return out


def test_connect_status_sync_disconnect(team_db: str, two_clones: tuple[Path, Path]) -> None:
    alice, bob = two_clones
    refused = nm("team", "connect", "postgresql://a:secret@127.0.0.1/x", cwd=alice, ok=False)
    assert refused.returncode == 2 and "pgpass" in refused.stderr
    assert not (alice / ".neuralmind.toml").exists()

    out = json.loads(nm("team", "connect", team_db, "--json", cwd=alice).stdout)
    assert out["connected"] and not out["read_only"] and out["sync"]["head"] == 0
    assert tomllib.loads((alice / ".neuralmind.toml").read_text())["team_dsn"] == team_db

    status = json.loads(nm("team", "status", "--json", cwd=alice).stdout)
    assert status["reachable"] and status["head"] == 0 and status["dsn_source"] == ".neuralmind.toml"
    assert status["repository"]["remote"] == "example.com/team/shop"

    from neuralmind.team.local import TeamLocal  # alice's editor learned something shared
    TeamLocal(alice / ".neuralmind").learn_batch([("app/billing.py", "app/users.py")],
                                                 ["app/billing.py", "app/users.py"])
    synced = json.loads(nm("team", "sync", "--json", cwd=alice).stdout)
    assert synced["pushed"] == 1 and synced["head"] == 1

    # bob uses the environment instead of the file
    pulled = json.loads(nm("team", "sync", "--json", cwd=bob,
                           env={"NEURALMIND_TEAM_DSN": team_db}).stdout)
    assert pulled["pulled"] == 1 and pulled["position"] == 1
    text = nm("team", "status", cwd=bob, env={"NEURALMIND_TEAM_DSN": team_db}).stdout
    assert "position 1 of 1" in text and "(environment)" in text

    gone = json.loads(nm("team", "disconnect", "--json", cwd=alice).stdout)
    assert gone["disconnected"] and gone["unpushed"] == 0
    assert "team_dsn" not in tomllib.loads((alice / ".neuralmind.toml").read_text())
    assert "not configured" in nm("team", "status", cwd=alice).stdout
    missing = nm("team", "sync", cwd=alice, ok=False)
    assert missing.returncode == 2 and "team connect" in missing.stderr


def test_an_unreachable_store_is_reported_by_status_and_sync(two_clones: tuple[Path, Path]) -> None:
    alice, _ = two_clones
    env = {"NEURALMIND_TEAM_DSN": "host=127.0.0.1 port=1 dbname=x user=x connect_timeout=2"}
    nm("decisions", "record", "--title", "Pool of four", "--rationale", "the database allows "
       "four connections", "--files", "app/billing.py", cwd=alice, env=env)
    status = json.loads(nm("team", "status", "--json", cwd=alice, env=env).stdout)
    assert status["configured"] and status["reachable"] is False
    assert status["local"]["unpushed"] >= 1        # the decision waits in memory.db's outbox
    assert "cannot reach" in status["error"]
    failed = nm("team", "sync", cwd=alice, env=env, ok=False)
    assert failed.returncode == 1 and "cannot reach the team store" in failed.stderr


def test_publish_then_a_fresh_clone_pulls_the_nearest_ancestor_and_updates(
        team_db: str, origin: Path, tmp_path: Path) -> None:
    env = {"NEURALMIND_TEAM_DSN": team_db}
    ci = clone(origin, tmp_path / "ci")
    nothing = nm("team", "pull-index", cwd=ci, env=env, ok=False)
    assert nothing.returncode == 2 and "nothing for this repository" in nothing.stderr
    (ci / "app" / "billing.py").write_text("x = 1\n")
    dirty = nm("team", "publish-index", cwd=ci, env=env, ok=False)
    assert dirty.returncode == 2 and "differs from" in dirty.stderr
    git(ci, "checkout", "--", "app/billing.py")
    (ci / "app" / "scratch.py").write_text("def local_experiment():\n    return 1\n")
    untracked = nm("team", "publish-index", cwd=ci, env=env, ok=False)
    assert untracked.returncode == 2 and "app/scratch.py" in untracked.stderr
    (ci / "app" / "scratch.py").unlink()
    published = json.loads(nm("team", "publish-index", "--json", cwd=ci, env=env).stdout)
    base = git(ci, "rev-parse", "HEAD").strip()
    assert published["commit"] == base and published["stored_bytes"] > 0

    # a teammate clones, is two commits further, and has no index yet
    dev = clone(origin, tmp_path / "dev")
    billing = dev / "app" / "billing.py"
    billing.write_text(billing.read_text() + "\n\ndef refund_invoice(invoice):\n"
                       '    """Reverse a paid invoice."""\n    return -invoice.total\n')
    git(dev, "commit", "-qam", "refunds")
    (dev / "app" / "notes.py").write_text("def shipping_note():\n    return 'fragile'\n")
    git(dev, "add", "-A")
    git(dev, "commit", "-qm", "notes")
    pulled = json.loads(nm("team", "pull-index", "--json", cwd=dev, env=env).stdout)
    assert pulled["commit"] == base and pulled["distance"] == 2
    assert pulled["reextracted"] == 2            # only what changed since the snapshot
    hits = json.loads(nm("search", "refund invoice", "--json", cwd=dev).stdout)
    assert any("refund_invoice" in json.dumps(h) for h in hits["hits"][:3])
    again = nm("team", "pull-index", cwd=dev, env=env, ok=False)
    assert again.returncode == 2 and "--force" in again.stderr
    forced = json.loads(nm("team", "pull-index", "--force", "--json", cwd=dev, env=env).stdout)
    assert forced["reextracted"] == 2

    # a snapshot published before the flat keyword index (bm25.json): installed without it,
    # said so, and the keyword index rebuilt from the graph
    with psycopg.connect(team_db, autocommit=True) as conn:
        conn.execute(f"UPDATE {SCHEMA}.snapshot_chunks SET name = 'bm25.json' "
                     "WHERE name = 'bm25.bin'")
        conn.execute(f"UPDATE {SCHEMA}.snapshots SET manifest = replace(manifest::text, "
                     "'\"bm25.bin\"', '\"bm25.json\"')::jsonb")
    old = json.loads(nm("team", "pull-index", "--force", "--json", cwd=dev, env=env).stdout)
    assert "older format" in old["notice"] and old["reextracted"] == 2
    state = dev / ".neuralmind"
    assert (state / "bm25.bin").is_file() and not (state / "bm25.json").exists()
    hits = json.loads(nm("search", "refund invoice", "--json", cwd=dev).stdout)
    assert any("refund_invoice" in json.dumps(h) for h in hits["hits"][:3])
