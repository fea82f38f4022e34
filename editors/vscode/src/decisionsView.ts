// The "NeuralMind Decisions" tree: ACTIVE / STALE / INVALIDATED groups from
// `neuralmind/decisions/audit`; a record opens as a read-only markdown document.
import * as vscode from "vscode";
import { DecisionRecord, Methods } from "./protocol";
import { decisionMarkdown, groupDecisions } from "./render";
import { FolderServer, ServerManager } from "./server";

export const DECISION_SCHEME = "neuralmind-decision";

type Node = { kind: "group"; status: string; records: DecisionRecord[] } | { kind: "record"; record: DecisionRecord; server: FolderServer };

export class DecisionsTree implements vscode.TreeDataProvider<Node> {
  private readonly changed = new vscode.EventEmitter<void>();
  readonly onDidChangeTreeData = this.changed.event;
  private groups: Map<string, DecisionRecord[]> = new Map();
  private server: FolderServer | undefined;
  message: string | undefined;

  constructor(private readonly servers: ServerManager) {}

  async refresh(): Promise<void> {
    this.server = this.servers.current();
    if (!this.server) {
      this.groups = new Map();
      this.message = "No workspace folder is open.";
    } else {
      try {
        const records = await this.server.request<DecisionRecord[]>(Methods.decisionsAudit, {});
        this.groups = groupDecisions(records ?? []);
        this.message = records?.length ? undefined : "No decisions recorded yet. Use \"NeuralMind: Record decision\".";
      } catch (e) {
        this.groups = new Map();
        this.message = e instanceof Error ? e.message : String(e);
      }
    }
    this.changed.fire();
  }

  getTreeItem(node: Node): vscode.TreeItem {
    if (node.kind === "group") {
      const item = new vscode.TreeItem(`${node.status} (${node.records.length})`, node.status === "ACTIVE" ? vscode.TreeItemCollapsibleState.Expanded : vscode.TreeItemCollapsibleState.Collapsed);
      item.iconPath = new vscode.ThemeIcon(node.status === "ACTIVE" ? "pass" : node.status === "STALE" ? "warning" : "circle-slash");
      item.contextValue = "group";
      return item;
    }
    const r = node.record;
    const item = new vscode.TreeItem(r.title, vscode.TreeItemCollapsibleState.None);
    item.description = (r.files_affected ?? []).join(", ");
    item.tooltip = `${r.status} · ${r.id}\n${r.rationale}`;
    item.accessibilityInformation = { label: `${r.title}, ${r.status}${item.description ? `, ${item.description}` : ""}` };
    item.contextValue = "decision";
    item.command = { command: "neuralmind.openDecision", title: "Open decision", arguments: [node.server.folder.index, r.id] };
    return item;
  }

  getChildren(node?: Node): Node[] {
    if (!node) {
      return [...this.groups.entries()].filter(([s, recs]) => recs.length > 0 || s === "ACTIVE" || s === "STALE" || s === "INVALIDATED").map(([status, records]) => ({ kind: "group", status, records }));
    }
    if (node.kind === "group" && this.server) {
      const server = this.server;
      return node.records.map((record) => ({ kind: "record", record, server }));
    }
    return [];
  }
}

/** Serves neuralmind-decision:/<folder index>/<id>.md from `neuralmind/decisions/get`. */
export class DecisionDocuments implements vscode.TextDocumentContentProvider {
  constructor(private readonly servers: ServerManager) {}

  static uri(folderIndex: number, id: string): vscode.Uri {
    return vscode.Uri.from({ scheme: DECISION_SCHEME, path: `/${folderIndex}/${encodeURIComponent(id)}.md` });
  }

  async provideTextDocumentContent(uri: vscode.Uri): Promise<string> {
    const [, index, file] = uri.path.split("/");
    const id = decodeURIComponent(file.replace(/\.md$/, ""));
    const server = this.servers.all().find((s) => s.folder.index === Number(index));
    if (!server) return `Decision ${id}: its workspace folder is no longer open.`;
    try {
      const record = await server.request<DecisionRecord>(Methods.decisionsGet, { id });
      return decisionMarkdown(record);
    } catch (e) {
      return `Decision ${id} could not be read: ${e instanceof Error ? e.message : String(e)}`;
    }
  }
}
