// The status bar item: polls `neuralmind/status` of the current folder's server, often while
// it indexes, rarely when idle; clicking it shows every status field.
import * as vscode from "vscode";
import { Methods, StatusResult } from "./protocol";
import { statusLines, statusView } from "./render";
import { ServerManager } from "./server";

const BUSY_MS = 2000;
const IDLE_MS = 15000;

export class StatusBar implements vscode.Disposable {
  private readonly item = vscode.window.createStatusBarItem(vscode.StatusBarAlignment.Left, 50);
  private timer: NodeJS.Timeout | undefined;
  private last: StatusResult | undefined;
  private generation = 0;
  private readonly subscriptions: vscode.Disposable[] = [];

  constructor(private readonly servers: ServerManager) {
    this.item.command = "neuralmind.showStatus";
    this.item.name = "NeuralMind";
    this.subscriptions.push(
      servers.onDidChange(() => this.refresh()),
      vscode.window.onDidChangeActiveTextEditor(() => this.refresh()),
    );
    this.refresh();
  }

  refresh(): void {
    clearTimeout(this.timer);
    const generation = ++this.generation;
    void this.update(generation).then((busy) => {
      if (generation === this.generation) this.timer = setTimeout(() => this.refresh(), busy ? BUSY_MS : IDLE_MS);
    });
  }

  /**
   * Returns true while something is in progress (poll again soon). An update overtaken by a
   * newer one (a state change while a status request was out) leaves the item alone.
   */
  private async update(generation: number): Promise<boolean> {
    const server = this.servers.current();
    if (!server) {
      this.item.hide();
      return false;
    }
    this.item.show();
    if (!server.running) {
      this.last = undefined;
      const text: Record<string, string> = {
        missing: "$(error) NeuralMind: not installed",
        starting: "$(sync~spin) NeuralMind starting",
        restarting: `$(debug-restart) NeuralMind restarting${server.restartDelayMs !== undefined ? ` in ${Math.round(server.restartDelayMs / 1000)} s` : ""}`,
        stopped: "$(circle-slash) NeuralMind stopped",
        running: "$(sync~spin) NeuralMind",
      };
      this.item.text = text[server.state];
      this.item.tooltip = `NeuralMind (${server.folder.name}): ${server.state}`;
      return server.state === "starting" || server.state === "restarting";
    }
    let status: StatusResult | undefined;
    try {
      status = await server.request<StatusResult>(Methods.status, {});
    } catch {
      status = undefined;
    }
    if (generation !== this.generation) return false;
    this.last = status;
    const view = statusView(this.last, Date.now());
    this.item.text = view.text;
    this.item.tooltip = `NeuralMind (${server.folder.name})\n${view.tooltip}`;
    this.item.backgroundColor = view.warning ? new vscode.ThemeColor("statusBarItem.warningBackground") : undefined;
    return Boolean(this.last?.indexing) || !this.last;
  }

  async showDetails(): Promise<void> {
    const server = this.servers.current();
    if (!server) return;
    const detail = this.last ? statusLines(this.last, Date.now()).join("\n") : `The server is ${server.state}.`;
    const choice = await vscode.window.showInformationMessage(
      `NeuralMind — ${server.folder.name}`,
      { modal: true, detail: `${detail}\n\nServer: ${server.command ?? "not found"}` },
      "Show output",
      "Restart server",
    );
    if (choice === "Show output") void vscode.commands.executeCommand("neuralmind.showOutput");
    if (choice === "Restart server") await server.restart();
  }

  dispose(): void {
    clearTimeout(this.timer);
    this.item.dispose();
    for (const s of this.subscriptions) s.dispose();
  }
}
