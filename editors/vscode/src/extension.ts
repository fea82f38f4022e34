// Extension entry: one NeuralMind server per workspace folder, the status bar, the
// decisions view and the commands. Behaviour lives in the server; this file only wires.
import * as path from "path";
import * as vscode from "vscode";
import { AskPanel } from "./askPanel";
import { EditorStateReporter } from "./attention";
import { DecisionDocuments, DecisionsTree, DECISION_SCHEME } from "./decisionsView";
import { siblingCli } from "./discovery";
import { MCP_CLIENTS, McpClient, runMcpConfig } from "./mcpConfig";
import { memoryInbox, recallMemories, remember } from "./memory";
import { copyLinkMessage, OBSERVATORY_METHOD, observatoryUrl } from "./observatory";
import { ContextResult, DecisionRecord, Methods, NextLikelyItem } from "./protocol";
import { nextLikelyItems } from "./render";
import { completeArguments, reviewChanges } from "./review";
import { FolderServer, ServerManager } from "./server";
import { SECTION } from "./settings";
import { StatusBar } from "./statusBar";

let manager: ServerManager | undefined;

export function activate(context: vscode.ExtensionContext): void {
  const output = vscode.window.createOutputChannel("NeuralMind");
  const servers = new ServerManager(output);
  servers.completeArguments = completeArguments;
  manager = servers;
  const status = new StatusBar(servers);
  const tree = new DecisionsTree(servers);
  const treeView = vscode.window.createTreeView("neuralmind.decisions", { treeDataProvider: tree });
  const refreshTree = async () => {
    await tree.refresh();
    treeView.message = tree.message;
  };

  context.subscriptions.push(
    output,
    status,
    new EditorStateReporter(servers),
    treeView,
    vscode.workspace.registerTextDocumentContentProvider(DECISION_SCHEME, new DecisionDocuments(servers)),
    vscode.workspace.onDidChangeWorkspaceFolders((e) => {
      e.added.forEach((f) => servers.add(f));
      e.removed.forEach((f) => void servers.remove(f));
    }),
    vscode.workspace.onDidChangeConfiguration((e) => {
      for (const s of servers.all()) {
        if (e.affectsConfiguration(`${SECTION}.serverPath`, s.folder.uri)) void s.restart();
        else if (e.affectsConfiguration(SECTION, s.folder.uri)) s.sendConfiguration();
      }
    }),
    servers.onDidChange(() => {
      if (treeView.visible) void refreshTree();
    }),
    servers.onDidChangeDecisions(() => {
      void refreshTree();
      status.refresh();
    }),
    treeView.onDidChangeVisibility((e) => e.visible && void refreshTree()),
    command("neuralmind.ask", () => ask(servers)),
    command("neuralmind.nextLikely", () => nextLikely(servers)),
    command("neuralmind.reviewChanges", () => reviewChanges(servers)),
    command("neuralmind.recordDecision", async () => {
      if (await recordDecision(servers)) await refreshTree();
    }),
    command("neuralmind.showDecisions", async () => {
      await vscode.commands.executeCommand("neuralmind.decisions.focus");
      await refreshTree();
    }),
    command("neuralmind.refreshDecisions", refreshTree),
    command("neuralmind.openDecision", async (folderIndex: number, id: string) => {
      const doc = await vscode.workspace.openTextDocument(DecisionDocuments.uri(folderIndex, id));
      await vscode.languages.setTextDocumentLanguage(doc, "markdown");
      await vscode.window.showTextDocument(doc, { preview: true });
    }),
    command("neuralmind.recall", () => recallMemories(servers)),
    command("neuralmind.remember", () => remember(servers)),
    command("neuralmind.memoryInbox", () => memoryInbox(servers)),
    command("neuralmind.copyMcpConfig", () => copyMcpConfig(servers)),
    command("neuralmind.openObservatory", () => openObservatory(servers)),
    command("neuralmind.showStatus", () => status.showDetails()),
    command("neuralmind.showOutput", () => output.show()),
    command("neuralmind.restartServer", async () => (await servers.pick())?.restart()),
  );
  for (const folder of vscode.workspace.workspaceFolders ?? []) servers.add(folder);
}

export async function deactivate(): Promise<void> {
  await manager?.dispose();
  manager = undefined;
}

/** Registers a command whose failures become one error message instead of a silent rejection. */
function command(id: string, fn: (...args: never[]) => unknown): vscode.Disposable {
  return vscode.commands.registerCommand(id, async (...args: never[]) => {
    try {
      return await fn(...args);
    } catch (e) {
      void vscode.window.showErrorMessage(e instanceof Error ? e.message : String(e));
      return undefined;
    }
  });
}

async function ask(servers: ServerManager): Promise<void> {
  const server = await servers.pick();
  if (!server) return;
  const editor = vscode.window.activeTextEditor;
  const selection = editor && !editor.selection.isEmpty ? editor.document.getText(editor.selection).trim() : "";
  const query = await vscode.window.showInputBox({
    title: "NeuralMind: Ask",
    prompt: "What do you need context for?",
    value: selection.length <= 200 ? selection : "",
    ignoreFocusOut: true,
  });
  if (!query?.trim()) return;
  const params: { query: string; uri?: string } = { query: query.trim() };
  if (editor && servers.forUri(editor.document.uri) === server) params.uri = editor.document.uri.toString();
  const result = await vscode.window.withProgress(
    { location: vscode.ProgressLocation.Window, title: "NeuralMind: gathering context" },
    () => server.request<ContextResult>(Methods.context, params),
  );
  AskPanel.show(server.folder, params.query, result);
}

async function nextLikely(servers: ServerManager): Promise<void> {
  const editor = vscode.window.activeTextEditor;
  const server = servers.forUri(editor?.document.uri);
  if (!editor || !server) {
    void vscode.window.showInformationMessage("NeuralMind: open a file of the workspace first.");
    return;
  }
  const items = await server.request<NextLikelyItem[]>(Methods.nextLikely, { uri: editor.document.uri.toString(), k: 10 });
  if (!items?.length) {
    void vscode.window.showInformationMessage("NeuralMind: no next-likely files yet; they are learned from the files you edit together.");
    return;
  }
  const picks = nextLikelyItems(items, (uri) => vscode.workspace.asRelativePath(vscode.Uri.parse(uri), false));
  const choice = await vscode.window.showQuickPick(picks, { title: "NeuralMind: next likely files", matchOnDescription: true });
  if (choice) await vscode.window.showTextDocument(vscode.Uri.parse(choice.uri));
}

async function recordDecision(servers: ServerManager): Promise<boolean> {
  const server = await servers.pick();
  if (!server) return false;
  const title = await vscode.window.showInputBox({ title: "NeuralMind: Record decision (1/3)", prompt: "Title: what was decided", ignoreFocusOut: true });
  if (!title?.trim()) return false;
  const rationale = await vscode.window.showInputBox({ title: "NeuralMind: Record decision (2/3)", prompt: "Rationale: why", ignoreFocusOut: true });
  if (rationale === undefined) return false;
  const editor = vscode.window.activeTextEditor;
  const current = editor && servers.forUri(editor.document.uri) === server ? relativeTo(server, editor.document.uri) : "";
  const filesText = await vscode.window.showInputBox({
    title: "NeuralMind: Record decision (3/3)",
    prompt: "Files it governs (comma-separated, workspace-relative)",
    value: current,
    ignoreFocusOut: true,
  });
  if (filesText === undefined) return false;
  const files = filesText.split(",").map((f) => f.trim()).filter(Boolean);
  const record = await server.request<DecisionRecord>(Methods.decisionsRecord, { title: title.trim(), rationale: rationale.trim(), files });
  void vscode.window.showInformationMessage(`NeuralMind: recorded decision "${record.title}" (${record.id}).`);
  return true;
}

function relativeTo(server: FolderServer, uri: vscode.Uri): string {
  return path.relative(server.folder.uri.fsPath, uri.fsPath).split(path.sep).join("/");
}

async function openObservatory(servers: ServerManager): Promise<void> {
  const server = await servers.pick();
  if (!server) return;
  const url = observatoryUrl(await server.request<unknown>(OBSERVATORY_METHOD, {}));
  if (vscode.env.uiKind === vscode.UIKind.Web) {
    const copy = "Copy link";
    if ((await vscode.window.showInformationMessage(copyLinkMessage(url), copy)) === copy) {
      await vscode.env.clipboard.writeText(url);
    }
    return;
  }
  // openExternal forwards the loopback port when the window is remote (SSH, containers).
  if (!(await vscode.env.openExternal(vscode.Uri.parse(url, true)))) {
    void vscode.window.showInformationMessage(`NeuralMind: open ${url} in a browser (the link works once).`);
  }
}

async function copyMcpConfig(servers: ServerManager): Promise<void> {
  const server = await servers.pick();
  if (!server) return;
  if (!server.command) {
    void vscode.window.showErrorMessage("NeuralMind: the neuralmind package is not installed, so there is no MCP server to configure.");
    return;
  }
  const client = await vscode.window.showQuickPick(MCP_CLIENTS, { title: "NeuralMind: MCP configuration for which client?" });
  if (!client) return;
  const outcome = await runMcpConfig(siblingCli(server.command), client as McpClient, server.folder.uri.fsPath);
  if (!outcome.ok) {
    void vscode.window.showErrorMessage(outcome.message);
    return;
  }
  await vscode.env.clipboard.writeText(outcome.text);
  void vscode.window.showInformationMessage(`NeuralMind: MCP configuration for ${client} copied to the clipboard.`);
}
