"""The question memory's boost is a fraction of the best file's score, sized per ranking:
the fused ranking's and the learned step's scores have different scales (config
QUESTION_BOOST / QUESTION_BOOST_LEARNED, measured by benchmarks/use_bench.py)."""

from __future__ import annotations

import pytest
from synapse_testkit import T0

from neuralmind import config
from neuralmind.context import retrieve
from neuralmind.index.file_rank import LEARNED_REASON, RankedFile, learned


class _Graph:
    """Only the node membership `_boost` asks of a graph (a file reached by synapses alone)."""
    nodes: dict[str, object] = {}


def _taught(layer) -> None:
    """One session: the question led to editing parser.py."""
    ev = layer.editing_event
    ev("s", "session_start", ts=T0, query="parser drops comments")
    layer.record_query("s", "parser drops comments", ["lexer.py::Lexer.next"], ts=T0)
    ev("s", "open", "parser.py", ts=T0 + 1)
    ev("s", "edit", "parser.py", ts=T0 + 2)
    ev("s", "session_end", ts=T0 + 3)
    layer.flush()


def _ranking(learned_step: bool) -> list[RankedFile]:
    reasons = [LEARNED_REASON] if learned_step else []
    return [RankedFile("lexer.py", 5.0, list(reasons), learned=learned_step),
            RankedFile("parser.py", 4.0, list(reasons), learned=learned_step)]


@pytest.mark.parametrize("learned_step", [False, True])
def test_the_boost_is_sized_by_the_ranking_it_lands_on(layer, learned_step: bool) -> None:
    _taught(layer)
    files = _ranking(learned_step)
    assert learned(files) is learned_step
    (p,) = [s for f, s in layer.question_files("parser drops comments") if f == "parser.py"]
    share = config.QUESTION_BOOST_LEARNED if learned_step else config.QUESTION_BOOST
    spread = dict(layer.spread(["lexer.py", "parser.py"], top_k=12,
                               namespaces=retrieve._learned_namespaces(layer)))
    boosted = {f.file: f.score for f in retrieve._boost(files, _Graph(), layer,
                                                       "parser drops comments")}
    expected = 4.0 + 5.0 * (config.SYNAPSE_BOOST * min(1.0, spread.get("parser.py", 0.0))
                            + share * p)
    assert p > 0.5 and boosted["parser.py"] == pytest.approx(expected)
    assert config.QUESTION_BOOST_LEARNED != config.QUESTION_BOOST
