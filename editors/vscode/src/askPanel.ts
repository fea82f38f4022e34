// The "NeuralMind: Ask" webview: one panel, reused; Copy goes through the extension host
// clipboard (webviews may not reach the system clipboard themselves).
import * as crypto from "crypto";
import * as path from "path";
import * as vscode from "vscode";
import { ContextResult } from "./protocol";
import { contextPanelHtml } from "./render";

export class AskPanel {
  private static current: AskPanel | undefined;
  private result: ContextResult | undefined;

  private constructor(
    private readonly panel: vscode.WebviewPanel,
    private folder: vscode.WorkspaceFolder,
  ) {
    panel.onDidDispose(() => (AskPanel.current = undefined));
    panel.webview.onDidReceiveMessage(async (msg: { type: string; file?: string; line?: number }) => {
      if (msg.type === "copy" && this.result) {
        await vscode.env.clipboard.writeText(this.result.context);
        void panel.webview.postMessage({ type: "copied" });
      } else if (msg.type === "open" && msg.file) {
        await openAt(this.folder, msg.file, msg.line ?? 1);
      }
    });
  }

  static show(folder: vscode.WorkspaceFolder, query: string, result: ContextResult): void {
    if (!AskPanel.current) {
      const panel = vscode.window.createWebviewPanel("neuralmind.context", "NeuralMind", vscode.ViewColumn.Beside, {
        enableScripts: true,
        localResourceRoots: [],
      });
      AskPanel.current = new AskPanel(panel, folder);
    }
    const self = AskPanel.current;
    self.folder = folder;
    self.result = result;
    self.panel.title = `NeuralMind: ${query.length > 30 ? query.slice(0, 29) + "…" : query}`;
    self.panel.webview.html = contextPanelHtml(query, result, {
      cspSource: self.panel.webview.cspSource,
      nonce: crypto.randomBytes(16).toString("base64"),
      displayPath: (f) => displayPath(folder, f),
    });
    // The answer takes the focus (its Copy button is focused), so it is usable from the keyboard at once.
    self.panel.reveal(vscode.ViewColumn.Beside, false);
  }
}

/** Server paths are workspace-relative or absolute; file URIs are accepted too. */
export function resolveFile(folder: vscode.WorkspaceFolder, file: string): vscode.Uri {
  if (file.startsWith("file:")) return vscode.Uri.parse(file);
  return path.isAbsolute(file) ? vscode.Uri.file(file) : vscode.Uri.joinPath(folder.uri, file);
}

function displayPath(folder: vscode.WorkspaceFolder, file: string): string {
  return vscode.workspace.asRelativePath(resolveFile(folder, file), false);
}

/** True when `uri` is a file inside the folder (the panel's links come from repository text). */
export function insideFolder(folder: vscode.WorkspaceFolder, uri: vscode.Uri): boolean {
  if (uri.scheme !== folder.uri.scheme) return false;
  const rel = path.relative(folder.uri.fsPath, uri.fsPath);
  return rel !== "" && !rel.startsWith("..") && !path.isAbsolute(rel);
}

export async function openAt(folder: vscode.WorkspaceFolder, file: string, line: number): Promise<void> {
  const uri = resolveFile(folder, file);
  if (!insideFolder(folder, uri)) {
    void vscode.window.showWarningMessage(`NeuralMind: ${file} is outside the workspace folder "${folder.name}"; not opened.`);
    return;
  }
  const pos = new vscode.Position(Math.max(0, (Number.isFinite(line) ? line : 1) - 1), 0);
  await vscode.window.showTextDocument(uri, { selection: new vscode.Range(pos, pos), preview: true, viewColumn: vscode.ViewColumn.One });
}
