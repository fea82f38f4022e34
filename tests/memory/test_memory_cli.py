"""`neuralmind memory ...`: every command, `--json` on each, exit statuses; in-process."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from neuralmind.cli.main import main


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


def js(capsys: pytest.CaptureFixture[str], *argv: str) -> object:
    code, out, err = run(capsys, *argv, "--json")
    assert code == 0, err
    return json.loads(out)


def test_every_command_from_the_terminal(repo: Path, capsys: pytest.CaptureFixture[str],
                                         model: object) -> None:
    root = str(repo)
    pref = js(capsys, "memory", "remember", "Keep functions under fifty lines", root,
              "--type", "preference", "--hub", "style")
    assert pref["type"] == "preference" and len(pref["id"]) == 16
    lesson = js(capsys, "memory", "remember", "acquire retries once after a timeout", root,
                "--type", "lesson", "--label", "Pool retries", "--hub", "pool",
                "--about", "pool.py::Pool.acquire", "--about", "pool.py")
    assert lesson["about"] == ["pool.py::Pool.acquire", "pool.py"]
    guess = js(capsys, "memory", "remember", "helper is dead code", root, "--proposed",
               "--about", "pool.py")
    assert guess["state"] == "proposed"
    assert [i["id"] for i in js(capsys, "memory", "inbox", root)] == [guess["id"]]
    assert js(capsys, "memory", "pin", pref["id"], root)["pinned"]
    assert "Keep functions under fifty lines" in js(capsys, "memory", "directives", root)["text"]
    recalled = js(capsys, "memory", "recall", "what happens when acquire times out?", root,
                  "--budget", "200", "--session", "hook:1")
    assert recalled["atoms"][0]["id"] == lesson["id"] and recalled["tokens"] <= 200
    rated = js(capsys, "memory", "rate", lesson["id"], "useful", root)
    assert rated["verdict"] == "useful" and rated["state"] == "active"
    edge = js(capsys, "memory", "link", guess["id"], "caused_by", lesson["id"], root)
    assert edge["dst_type"] == "atom"
    assert js(capsys, "memory", "show", lesson["id"][:8], root)["useful"] == 1
    assert js(capsys, "memory", "hub", "pool", root, "--synonyms", "connections")["synonyms"] == \
        ["connections"]
    assert js(capsys, "memory", "accept", guess["id"], root)["state"] == "active"
    report = js(capsys, "memory", "dream", root, "--phase", "light")
    assert report["phases"] == ["light"] and (repo / ".neuralmind" / "DREAMS.md").is_file()
    stats = js(capsys, "memory", "stats", root)
    assert stats["atoms"] == 3 and stats["pinned"] == 1
    assert js(capsys, "memory", "forget", guess["id"], root)["id"] == guess["id"]
    loop = js(capsys, "memory", "remember", "ship the docs", root, "--type", "open_loop")
    assert js(capsys, "memory", "close", loop["id"], root)["closed_at"]
    assert js(capsys, "memory", "restore", lesson["id"], root)["state"] == "active"
    code, out, _ = run(capsys, "memory", "recall", "pool retries", root)
    assert code == 0 and "Pool retries" in out
    code, _, err = run(capsys, "memory", "export", root)
    assert code == 0


@pytest.mark.parametrize("argv, status, message", [
    (["memory", "rate", "no-such-atom", "useful"], 1, "no memory with id"),
    (["memory", "rate", "x", "great"], 2, "unknown verdict"),
    (["memory", "remember", "x", ".", "--type", "rumour"], 2, "unknown atom type"),
    (["memory", "remember", "x", ".", "--about", "/etc/passwd"], 2, "outside"),
    (["memory", "link", "x", "likes", "y"], 2, "unknown edge kind"),
    (["memory", "recall", "x", ".", "--budget", "5"], 2, "budget"),
    (["memory"], 2, ""),
])
def test_bad_requests_are_one_line_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                          monkeypatch: pytest.MonkeyPatch, argv: list[str],
                                          status: int, message: str) -> None:
    monkeypatch.chdir(tmp_path)
    js_atom = main(["memory", "remember", "seed", ".", "--json"])
    assert js_atom == 0
    capsys.readouterr()
    code, _, err = run(capsys, *argv)
    assert code == status and message in err and "Traceback" not in err
