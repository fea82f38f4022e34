"""Output schemas of the MCP tools: what `structuredContent` promises to clients.

They describe the JSON the EngineService already returns (the same shapes as the
CLI's `--json` and the LSP requests); `extra="allow"` lets the engine add fields
without breaking clients that validate against the published schema.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class _Open(BaseModel):
    model_config = ConfigDict(extra="allow")


class Hit(_Open):
    id: str = Field(description="node id (`path::Qualified.name`, or the path for a file); "
                                "pass it to neuralmind_feedback")
    file: str
    line: int
    end_line: int
    symbol: str
    kind: str
    score: float


class RankedFile(_Open):
    file: str
    score: float
    reasons: list[str] = Field(description="why it ranks here (lists it tops, priors, pairing)")


class IndexingState(_Open):
    phase: str
    done: int
    total: int


class ContextPack(_Open):
    context: str = Field(description="markdown to read instead of opening whole files")
    tokens: int = Field(description="size of `context` in o200k_base tokens")
    layers: dict[str, int] = Field(description="tokens per layer (L0 identity, L1 summary, "
                                               "L2 communities, L3 search hits)")
    mode: str = Field(description="retrieval mode that ran: hybrid, or keyword without the model")
    files: list[RankedFile] = Field(default_factory=list, description=(
        "the files the question needs, best first; a test just below the source it exercises"))
    hits: list[Hit] = Field(description="symbols, their files in the order of `files` first")
    partial: bool = Field(description="true while the workspace is still being indexed")
    notice: str | None = None
    indexing: IndexingState | None = None


class SearchResult(_Open):
    mode: str
    hits: list[Hit]
    partial: bool
    notice: str | None = None
    indexing: IndexingState | None = None


class Likely(_Open):
    file: str
    probability: float


class NextLikely(_Open):
    file: str = Field(description="the workspace-relative file asked about")
    next: list[Likely] = Field(description="files most likely to be touched next, best first")


class FeedbackResult(_Open):
    node: str
    positive: bool
    context: list[str] = Field(description="node ids reinforced together with `node`")
    recorded: bool = Field(description="false when learning is off or the write was skipped")
    reason: str | None = Field(description="why nothing was recorded (null when recorded)")


class Learning(_Open):
    enabled: bool
    events: int
    batches: int


class Status(_Open):
    root: str
    files: int
    nodes: int
    indexed_nodes: int
    embedded_nodes: int
    embeddings_pending: int
    model_state: str
    last_full_build: str | None = None
    last_incremental_update: str | None = None
    files_pending: int
    indexing: IndexingState | None = None
    learning: Learning
    mcp_endpoint: str | None = None
    read_only: bool = Field(description="true when recording tools are refused")


class Decision(_Open):
    id: str
    title: str
    rationale: str
    status: str
    decision_type: str
    files_affected: list[str]
    symbols_affected: list[str]
    rejected_alternatives: list[str]
    confidence: float
    created_at: str


class ScoredDecision(Decision):
    score: float


class DecisionQuery(_Open):
    mode: str = Field(description="search mode that ran (keyword, semantic or hybrid)")
    requested_mode: str | None = None
    notice: str | None = None
    results: list[ScoredDecision]


class MemoryRow(_Open):
    id: str
    title: str
    status: str
    date: str
    files: list[str]
    snippet: str
    score: float | None = None


class MemorySearch(_Open):
    mode: str
    notice: str | None = None
    status: str
    results: list[MemoryRow]
    next: str


class MemoryTimeline(_Open):
    anchor: MemoryRow | None
    before: list[MemoryRow]
    after: list[MemoryRow]
    mode: str | None = None
    notice: str | None = None


class MemoryGet(_Open):
    records: list[dict]


class Atom(_Open):
    id: str


class Recall(_Open):
    context: str
    atoms: list[dict]


class Rated(_Open):
    state: str


class Directives(_Open):
    text: str


class Inbox(_Open):
    atoms: list[dict]


class Review(_Open):
    base: str
    missing: list[dict] = Field(description="{file, because, confidence}")
    decisions_at_risk: list[dict]


class EditorState(_Open):
    active_file: str | None
    trail: list[dict]


class Reveal(_Open):
    shown: bool
