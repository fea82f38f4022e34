// The `neuralmind/editorState` notification: what the editor shows, for agents. Built from
// plain shapes (no `vscode` import: tested in Node); attention.ts reads them from VS Code.
// The server validates and clips again; clipping here keeps the traffic small.

/** Selected text sent at most (the server keeps the same). */
export const SELECTION_CHARS = 2000;
export const MAX_OPEN_FILES = 200;
export const MAX_DIAGNOSTICS = 200;
export const MAX_RANGES = 20;

export interface Pos {
  line: number;
  character: number;
}

export interface Rng {
  start: Pos;
  end: Pos;
}

export interface DiagnosticItem {
  range: Rng;
  message: string;
  /** LSP severity: 1 error, 2 warning, 3 information, 4 hint. */
  severity?: number;
  source?: string;
  code?: string;
}

/** What the editor shows right now, as URIs and 0-based positions. */
export interface EditorSnapshot {
  activeFile?: string;
  selection?: Rng & { text: string };
  visibleRanges: Rng[];
  openFiles: string[];
  diagnostics: DiagnosticItem[];
}

export interface EditorStateParams {
  activeFile: string | null;
  selection: (Rng & { text: string }) | null;
  visibleRanges: Rng[];
  openFiles: string[];
  diagnostics: DiagnosticItem[];
}

/**
 * The params for one folder's server: only that folder's files (`inFolder`), the selection and
 * diagnostics only with an active file of the folder, the selected text clipped.
 */
export function editorStateParams(s: EditorSnapshot, inFolder: (uri: string) => boolean): EditorStateParams {
  const active = s.activeFile && inFolder(s.activeFile) ? s.activeFile : null;
  const selection = active && s.selection ? { ...s.selection, text: s.selection.text.slice(0, SELECTION_CHARS) } : null;
  return {
    activeFile: active,
    selection,
    visibleRanges: active ? s.visibleRanges.slice(0, MAX_RANGES) : [],
    openFiles: [...new Set(s.openFiles.filter(inFolder))].slice(0, MAX_OPEN_FILES),
    diagnostics: active ? s.diagnostics.slice(0, MAX_DIAGNOSTICS) : [],
  };
}

/** VS Code's DiagnosticSeverity (0 error .. 3 hint) as LSP's (1 .. 4). */
export function lspSeverity(vscodeSeverity: number): number {
  return Math.min(4, Math.max(1, vscodeSeverity + 1));
}

/** A diagnostic code as text: VS Code allows a string, a number or `{ value, target }`. */
export function codeText(code: unknown): string | undefined {
  if (code === undefined || code === null) return undefined;
  if (typeof code === "object" && "value" in (code as object)) return String((code as { value: unknown }).value);
  return String(code);
}

/** Calls `fn` once `ms` after the last `trigger` (editor events come in bursts). */
export class Debouncer {
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly ms: number,
    private readonly fn: () => void,
  ) {}

  trigger(): void {
    clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.fn();
    }, this.ms);
  }

  dispose(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
  }
}
