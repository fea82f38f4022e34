// The memory commands: recall, remember, and the inbox of proposed memories. The server
// does the work; these only ask, send one request and show the answer.
import * as vscode from "vscode";
import { atomItems, atomMarkdown, emptyRecall } from "./memoryRender";
import { Atom, ATOM_TYPES, Methods, RecallResult } from "./protocol";
import { ServerManager } from "./server";

export async function recallMemories(servers: ServerManager): Promise<void> {
  const server = await servers.pick();
  if (!server) return;
  const query = await vscode.window.showInputBox({ title: "NeuralMind: Recall memories", prompt: "What should be remembered about?", ignoreFocusOut: true });
  if (!query?.trim()) return;
  const result = await server.request<RecallResult>(Methods.memoryRecall, { query: query.trim() });
  if (!result.atoms.length) {
    void vscode.window.showInformationMessage(emptyRecall(result, query.trim()));
    return;
  }
  const choice = await vscode.window.showQuickPick(atomItems(result.atoms), { title: `NeuralMind: memories (${result.mode})`, matchOnDetail: true });
  const atom = choice && result.atoms.find((a) => a.id === choice.id);
  if (atom) await showAtom(atom);
}

export async function remember(servers: ServerManager): Promise<void> {
  const server = await servers.pick();
  if (!server) return;
  const text = await vscode.window.showInputBox({ title: "NeuralMind: Remember (1/2)", prompt: "What should later sessions know?", ignoreFocusOut: true });
  if (!text?.trim()) return;
  const type = await vscode.window.showQuickPick([...ATOM_TYPES], { title: "NeuralMind: Remember (2/2): what kind of memory?" });
  if (!type) return;
  const editor = vscode.window.activeTextEditor;
  const uris = editor && servers.forUri(editor.document.uri) === server ? [editor.document.uri.toString()] : [];
  const atom = await server.request<Atom>(Methods.memoryRemember, { text: text.trim(), type, uris });
  void vscode.window.showInformationMessage(`NeuralMind: remembered "${atom.label}" (${atom.id}).`);
}

export async function memoryInbox(servers: ServerManager): Promise<void> {
  const server = await servers.pick();
  if (!server) return;
  const proposed = await server.request<Atom[]>(Methods.memoryInbox, {});
  if (!proposed.length) {
    void vscode.window.showInformationMessage("NeuralMind: the memory inbox is empty.");
    return;
  }
  const choice = await vscode.window.showQuickPick(atomItems(proposed), { title: "NeuralMind: proposed memories", matchOnDetail: true });
  if (!choice) return;
  const verdict = await vscode.window.showQuickPick(["Accept", "Reject"], { title: choice.label });
  if (!verdict) return;
  await server.request<Atom>(verdict === "Accept" ? Methods.memoryAccept : Methods.memoryReject, { id: choice.id });
}

async function showAtom(atom: Atom): Promise<void> {
  const doc = await vscode.workspace.openTextDocument({ language: "markdown", content: atomMarkdown(atom) });
  await vscode.window.showTextDocument(doc, { preview: true });
}
