// Shared attention: tells each folder's server what the editor shows (debounced), so agents
// can see it through MCP `neuralmind_editor_state`. Off with the setting neuralmind.editorState.
import * as vscode from "vscode";
import { codeText, Debouncer, EditorSnapshot, editorStateParams, lspSeverity, Rng } from "./editorState";
import { Notifications } from "./protocol";
import { ServerManager } from "./server";
import { SECTION } from "./settings";

const DEBOUNCE_MS = 300;

const rng = (r: vscode.Range): Rng => ({
  start: { line: r.start.line, character: r.start.character },
  end: { line: r.end.line, character: r.end.character },
});

/** What the editor shows now, as plain shapes. */
export function snapshot(): EditorSnapshot {
  const editor = vscode.window.activeTextEditor;
  const tabs = vscode.window.tabGroups.all.flatMap((g) => g.tabs);
  const openFiles = tabs.flatMap((t) => (t.input instanceof vscode.TabInputText && t.input.uri.scheme === "file" ? [t.input.uri.toString()] : []));
  if (!editor || editor.document.uri.scheme !== "file") return { visibleRanges: [], openFiles, diagnostics: [] };
  const doc = editor.document;
  return {
    activeFile: doc.uri.toString(),
    selection: { ...rng(editor.selection), text: doc.getText(editor.selection) },
    visibleRanges: editor.visibleRanges.map(rng),
    openFiles,
    diagnostics: vscode.languages.getDiagnostics(doc.uri).map((d) => ({
      range: rng(d.range),
      message: d.message,
      severity: lspSeverity(d.severity),
      source: d.source,
      code: codeText(d.code),
    })),
  };
}

export class EditorStateReporter implements vscode.Disposable {
  private readonly debouncer = new Debouncer(DEBOUNCE_MS, () => this.send());
  private readonly subscriptions: vscode.Disposable[] = [];
  /** Last params sent per folder: nothing is sent when nothing changed. */
  private readonly sent = new Map<string, string>();

  constructor(private readonly servers: ServerManager) {
    const trigger = () => this.debouncer.trigger();
    this.subscriptions.push(
      vscode.window.onDidChangeActiveTextEditor(trigger),
      vscode.window.onDidChangeTextEditorSelection(trigger),
      vscode.window.onDidChangeTextEditorVisibleRanges(trigger),
      vscode.window.tabGroups.onDidChangeTabs(trigger),
      vscode.languages.onDidChangeDiagnostics(trigger),
      servers.onDidChange(() => {
        this.sent.clear(); // a (re)started server knows nothing yet
        trigger();
      }),
    );
    trigger();
  }

  private send(): void {
    const state = snapshot();
    for (const server of this.servers.all()) {
      const key = server.folder.uri.toString();
      if (!server.running || !vscode.workspace.getConfiguration(SECTION, server.folder.uri).get<boolean>("editorState", true)) {
        this.sent.delete(key);
        continue;
      }
      const params = editorStateParams(state, (uri) => this.servers.forUri(vscode.Uri.parse(uri)) === server);
      const text = JSON.stringify(params);
      if (this.sent.get(key) === text) continue;
      this.sent.set(key, text);
      server.notify(Notifications.editorState, params);
    }
  }

  dispose(): void {
    this.debouncer.dispose();
    this.subscriptions.forEach((d) => d.dispose());
  }
}
