// The neuralmind/* custom requests the extension sends, with the shapes the server answers.
// Kept free of `vscode` so the integration test and the renderers use the same types.

export const Methods = {
  context: "neuralmind/context",
  wakeup: "neuralmind/wakeup",
  search: "neuralmind/search",
  nextLikely: "neuralmind/nextLikely",
  decisionsRecord: "neuralmind/decisions/record",
  decisionsQuery: "neuralmind/decisions/query",
  decisionsGet: "neuralmind/decisions/get",
  decisionsAudit: "neuralmind/decisions/audit",
  feedback: "neuralmind/feedback",
  status: "neuralmind/status",
  review: "neuralmind/review",
  memoryRemember: "neuralmind/memory/remember",
  memoryRecall: "neuralmind/memory/recall",
  memoryInbox: "neuralmind/memory/inbox",
  memoryAccept: "neuralmind/memory/accept",
  memoryReject: "neuralmind/memory/reject",
} as const;

/** Notifications: the editor's state (client -> server), an agent's note (server -> client). */
export const Notifications = {
  editorState: "neuralmind/editorState",
  revealNote: "neuralmind/revealNote",
} as const;

export interface Because {
  changed_file: string;
  together: number;
  of: number;
  /** "commits" or "sessions". */
  source: string;
}

export interface MissingFile {
  file: string;
  uri?: string;
  because: Because[];
  confidence: number;
}

export interface DecisionAtRisk {
  id: string;
  title: string;
  file: string;
  uri?: string;
  symbol: string | null;
  line: number;
  end_line: number;
  reason: string;
}

export interface ReviewResult {
  base: string;
  base_ref: string;
  changed_files: string[];
  unsaved_files: string[];
  missing: MissingFile[];
  decisions_at_risk: DecisionAtRisk[];
  min_confidence: number;
}

export interface RevealNote {
  uri: string;
  line: number;
  end_line: number;
  note: string;
}

export interface Hit {
  file: string;
  line: number;
  end_line?: number;
  symbol?: string;
  kind?: string;
  score?: number;
}

export interface ContextParams {
  query: string;
  budget?: number;
  uri?: string;
}

export interface ContextResult {
  context: string;
  tokens: number;
  layers?: Record<string, number>;
  mode?: string;
  hits?: Hit[];
  partial?: boolean;
}

export interface NextLikelyParams {
  uri: string;
  k?: number;
}

export interface NextLikelyItem {
  uri: string;
  /** Workspace-relative path. */
  file?: string;
  probability: number;
}

export type DecisionStatus = "ACTIVE" | "STALE" | "INVALIDATED";

export interface DecisionRecord {
  id: string;
  title: string;
  rationale: string;
  status: DecisionStatus | string;
  decision_type?: string;
  commit_sha?: string | null;
  files_affected?: string[];
  symbols_affected?: string[];
  rejected_alternatives?: string[];
  evidence?: string[];
  confidence?: number;
  tags?: string[];
  author?: string;
  created_at?: string;
  updated_at?: string;
  /** Audit only: why the decision needs attention ("stale", "invalidated", "age", "orphaned"). */
  attention?: string[];
  [extra: string]: unknown;
}

export interface RecordDecisionParams {
  title: string;
  rationale: string;
  files?: string[];
  symbols?: string[];
  type?: string;
  tags?: string[];
}

export interface IndexingProgress {
  phase: string;
  done: number;
  total: number;
}

export interface StatusResult {
  root?: string;
  last_full_build?: string | number | null;
  last_incremental_update?: string | number | null;
  files_pending?: number;
  files?: number;
  nodes?: number;
  indexed_nodes?: number;
  embedded_nodes?: number;
  embeddings_pending?: number;
  /** "loaded", "not_loaded" (loads on first use) or "unavailable" (keyword-only mode). */
  model_state?: string;
  model_error?: string | null;
  mcp_endpoint?: string | null;
  indexing?: IndexingProgress | null;
  last_error?: string | null;
  [extra: string]: unknown;
}

/** One memory (an atom) as recall and remember return it. */
export interface Atom {
  id: string;
  type: string;
  label: string;
  text: string;
  state?: string;
  status?: string;
  hubs?: string[];
  about?: string[];
  score?: number;
  truncated?: boolean;
  [extra: string]: unknown;
}

export interface RecallResult {
  mode: string;
  context: string;
  tokens: number;
  atoms: Atom[];
  notice?: string;
}

export const ATOM_TYPES = ["note", "lesson", "preference", "fact", "open_loop", "decision"] as const;
