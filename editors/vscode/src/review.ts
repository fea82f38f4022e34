// "NeuralMind: Review changes": the files the pending change probably misses and the
// decisions it puts at risk, in a quick pick; and the prompt a superseding decision needs.
import * as vscode from "vscode";
import { Methods, ReviewResult } from "./protocol";
import { reviewItems, ReviewPick, reviewSummary } from "./render";
import { FolderServer, ServerManager } from "./server";

export const SUPERSEDE = "neuralmind.decision.supersede";

/** Unsaved editor buffers of the folder, sent with the review so they count as they are. */
function unsavedBuffers(servers: ServerManager, server: FolderServer): { uri: string; text: string }[] {
  return vscode.workspace.textDocuments
    .filter((d) => d.isDirty && d.uri.scheme === "file" && servers.forUri(d.uri) === server)
    .map((d) => ({ uri: d.uri.toString(), text: d.getText() }));
}

async function open(server: FolderServer, pick: ReviewPick): Promise<void> {
  const uri = vscode.Uri.joinPath(server.folder.uri, ...pick.file.split("/"));
  const at = new vscode.Position(Math.max(0, pick.line - 1), 0);
  await vscode.window.showTextDocument(uri, { selection: new vscode.Range(at, at) });
}

async function decide(servers: ServerManager, server: FolderServer, pick: ReviewPick): Promise<void> {
  const id = pick.decision!;
  const choice = await vscode.window.showQuickPick(
    [
      { label: "Re-affirm", detail: "This change respects the decision: keep it ACTIVE.", command: "neuralmind.decision.reaffirm", args: [id] },
      { label: "Supersede", detail: "Record a new decision that replaces it.", command: SUPERSEDE, args: [id] },
      { label: "Invalidate", detail: "It no longer holds.", command: "neuralmind.decision.invalidate", args: [id, "invalidated from the review: the pending change replaces it"] },
    ],
    { title: `NeuralMind: '${pick.title}' is at risk` },
  );
  if (!choice) return;
  const args = choice.command === SUPERSEDE ? await supersedeArguments(choice.args) : choice.args;
  if (!args) return;
  await server.executeCommand(choice.command, args);
  servers.fireDecisionsChanged();
}

export async function reviewChanges(servers: ServerManager): Promise<void> {
  const server = await servers.pick();
  if (!server) return;
  const result = await vscode.window.withProgress(
    { location: vscode.ProgressLocation.Window, title: "NeuralMind: reviewing changes" },
    () => server.request<ReviewResult>(Methods.review, { buffers: unsavedBuffers(servers, server) }),
  );
  const items = reviewItems(result);
  if (!items.length) {
    void vscode.window.showInformationMessage(reviewSummary(result));
    return;
  }
  const pick = await vscode.window.showQuickPick(items, { title: reviewSummary(result), matchOnDescription: true, matchOnDetail: true });
  if (!pick) return;
  await open(server, pick);
  if (pick.what === "at_risk") await decide(servers, server, pick);
}

/** [id] -> [id, title, rationale], asked of the user (undefined: cancelled). */
export async function supersedeArguments(args: unknown[]): Promise<unknown[] | undefined> {
  if (args.length !== 1) return args;
  const title = await vscode.window.showInputBox({ title: "NeuralMind: Supersede decision (1/2)", prompt: "Title of the new decision", ignoreFocusOut: true });
  if (!title?.trim()) return undefined;
  const rationale = await vscode.window.showInputBox({ title: "NeuralMind: Supersede decision (2/2)", prompt: "Rationale: why it replaces the old one", ignoreFocusOut: true });
  if (!rationale?.trim()) return undefined;
  return [args[0], title.trim(), rationale.trim()];
}

/** Server commands whose arguments the user completes first (a code action carries [id]). */
export async function completeArguments(command: string, args: unknown[]): Promise<unknown[] | undefined> {
  return command === SUPERSEDE ? supersedeArguments(args) : args;
}
