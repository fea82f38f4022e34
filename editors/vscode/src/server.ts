// One `neuralmind-lsp --stdio` per workspace folder: discovery, start, restart with backoff
// after a crash, configuration forwarding, and typed custom requests.
import * as vscode from "vscode";
import {
  CloseAction,
  DidChangeConfigurationNotification,
  DynamicFeature,
  ErrorAction,
  ExecuteCommandRequest,
  LanguageClient,
  LanguageClientOptions,
  ServerOptions,
  State,
  StaticFeature,
} from "vscode-languageclient/node";
import { commandsToRegister, DECISION_CHANGING } from "./commands";
import { RestartBackoff } from "./backoff";
import { discover, notFoundMessage, installCommand, SERVER_NAME } from "./discovery";
import { pickServerExecutable } from "./pickServer";
import {
  configurationItem,
  didChangeConfigurationParams,
  initializationOptions,
  mapSettings,
  SECTION,
  ServerSettings,
} from "./settings";
import { pythonInterpreter } from "./python";
import { Notifications, RevealNote } from "./protocol";

/**
 * A language client without the built-in executeCommand feature: the ServerManager
 * registers the server's command ids once for all folders (see commands.ts).
 */
class NeuralMindLanguageClient extends LanguageClient {
  override registerFeature(feature: StaticFeature | DynamicFeature<unknown>): void {
    const method = (feature as Partial<DynamicFeature<unknown>>).registrationType?.method;
    if (method === ExecuteCommandRequest.method) return;
    super.registerFeature(feature);
  }
}

/** Tells the server this client shows an agent's note with a reveal (`neuralmind/revealNote`). */
const revealNoteFeature: StaticFeature = {
  fillClientCapabilities(capabilities): void {
    const experimental = (capabilities.experimental ?? {}) as Record<string, unknown>;
    capabilities.experimental = { ...experimental, neuralmind: { revealNote: true } };
  },
  initialize(): void {},
  getState: () => ({ kind: "static" }),
  clear(): void {},
};

export type ServerState = "starting" | "running" | "restarting" | "missing" | "stopped";

export class FolderServer implements vscode.Disposable {
  private client: LanguageClient | undefined;
  private readonly backoff = new RestartBackoff();
  private restartTimer: NodeJS.Timeout | undefined;
  /** A restart is scheduled: a failed start reports both a rejection and a close. */
  private restartPending = false;
  private disposed = false;
  private generation = 0;
  private notifiedMissing = false;
  state: ServerState = "stopped";
  command: string | undefined;
  /** While restarting after a crash: the delay chosen by the backoff (ms). */
  restartDelayMs: number | undefined;

  constructor(
    readonly folder: vscode.WorkspaceFolder,
    private readonly output: vscode.OutputChannel,
    private readonly onStateChange: () => void,
  ) {}

  private setState(state: ServerState): void {
    this.state = state;
    this.onStateChange();
  }

  settings(): ServerSettings {
    const cfg = vscode.workspace.getConfiguration(SECTION, this.folder.uri);
    const { settings, problems } = mapSettings((name) => cfg.get(name));
    for (const p of problems) this.output.appendLine(`[${this.folder.name}] ${p}`);
    return settings;
  }

  async start(): Promise<void> {
    if (this.disposed) return;
    const generation = ++this.generation;
    this.setState("starting");
    const serverPath = vscode.workspace.getConfiguration(SECTION, this.folder.uri).get<string>("serverPath");
    const python = await pythonInterpreter(this.folder);
    const found = discover(SERVER_NAME, { serverPath, pythonPath: python, workspaceFolder: this.folder.uri.fsPath });
    if (!found.command) {
      this.command = undefined;
      this.setState("missing");
      this.output.appendLine(`[${this.folder.name}] ${SERVER_NAME} not found; looked at:\n  ${found.tried.join("\n  ")}`);
      if (!this.notifiedMissing) {
        this.notifiedMissing = true;
        void this.showMissing(notFoundMessage(found, python), installCommand(python));
      }
      return;
    }
    this.command = found.command;
    this.restartDelayMs = undefined;
    this.output.appendLine(`[${this.folder.name}] starting ${found.command} --stdio (from ${found.source})`);

    const serverOptions: ServerOptions = {
      command: found.command,
      args: ["--stdio"],
      options: { cwd: this.folder.uri.fsPath },
    };
    const clientOptions: LanguageClientOptions = {
      documentSelector: [{ scheme: "file", pattern: `${this.folder.uri.fsPath.replace(/\\/g, "/")}/**/*` }],
      workspaceFolder: this.folder,
      outputChannel: this.output,
      initializationOptions: initializationOptions(this.settings()),
      errorHandler: {
        error: () => ({ action: ErrorAction.Continue }),
        closed: () => {
          if (!this.disposed && generation === this.generation) this.scheduleRestart();
          return { action: CloseAction.DoNotRestart, handled: true };
        },
      },
      middleware: {
        workspace: {
          configuration: (params, token, next) => {
            const wanted = params.items.filter((i) => i.section === undefined || i.section.startsWith(SECTION));
            if (wanted.length !== params.items.length) return next(params, token);
            const settings = this.settings();
            return params.items.map((i) => configurationItem(i.section, settings));
          },
        },
      },
    };
    const client = new NeuralMindLanguageClient(`neuralmind-${this.folder.index}`, `NeuralMind (${this.folder.name})`, serverOptions, clientOptions);
    client.registerFeature(revealNoteFeature);
    client.onNotification(Notifications.revealNote, (p: RevealNote) => {
      // The selection itself arrives as window/showDocument, which the client handles.
      void vscode.window.showInformationMessage(`NeuralMind (agent): ${p.note}`);
    });
    this.client = client;
    this.backoff.started(Date.now());
    try {
      await client.start();
      if (generation === this.generation) this.setState("running");
    } catch (e) {
      this.output.appendLine(`[${this.folder.name}] the server failed to start: ${String(e)}`);
      if (!this.disposed && generation === this.generation) this.scheduleRestart();
    }
  }

  private async showMissing(message: string, install: string): Promise<void> {
    const choice = await vscode.window.showErrorMessage(message, "Select executable…", "Copy install command", "Open settings");
    if (choice === "Select executable…") await pickServerExecutable(this.folder);
    if (choice === "Copy install command") await vscode.env.clipboard.writeText(install);
    if (choice === "Open settings") await vscode.commands.executeCommand("workbench.action.openSettings", "neuralmind.serverPath");
  }

  private scheduleRestart(): void {
    if (this.restartPending) return;
    this.restartPending = true;
    const delay = this.backoff.crashed(Date.now());
    this.restartDelayMs = delay;
    const seconds = Math.round(delay / 1000);
    this.output.appendLine(`[${this.folder.name}] the server stopped; restarting in ${seconds} s`);
    if (this.backoff.crashesInARow === 1) {
      // Once per streak: a crash the user did not cause deserves a word, not a toast per retry.
      void vscode.window
        .showWarningMessage(`NeuralMind: the server for "${this.folder.name}" stopped unexpectedly; restarting in ${seconds} s.`, "Show output")
        .then((c) => c && this.output.show());
    } else if (this.backoff.shouldNotify) {
      void vscode.window
        .showWarningMessage(`NeuralMind: the server for "${this.folder.name}" keeps crashing; see the output.`, "Show output")
        .then((c) => c && this.output.show());
    }
    this.setState("restarting");
    clearTimeout(this.restartTimer);
    this.restartTimer = setTimeout(() => void this.restart(false), delay);
  }

  /** Stops the current process (if any) and starts a fresh one. */
  async restart(resetBackoff = true): Promise<void> {
    clearTimeout(this.restartTimer);
    this.restartPending = false;
    if (resetBackoff) {
      this.backoff.reset();
      this.notifiedMissing = false;
    }
    this.generation++;
    await this.stopClient();
    await this.start();
  }

  private async stopClient(): Promise<void> {
    const client = this.client;
    this.client = undefined;
    if (!client) return;
    try {
      if (client.state !== State.Stopped) await client.stop(2000);
    } catch {
      // already gone: nothing to stop
    }
  }

  /** Pushes the current settings to a running server. */
  sendConfiguration(): void {
    if (this.client?.state === State.Running) {
      void this.client.sendNotification(DidChangeConfigurationNotification.type, didChangeConfigurationParams(this.settings()));
    }
  }

  /** Running as far as the extension knows: a crash is "restarting" before the client notices. */
  get running(): boolean {
    return this.state === "running" && this.client?.state === State.Running;
  }

  /** The executeCommand ids the running server advertised. */
  serverCommands(): string[] {
    return this.client?.initializeResult?.capabilities.executeCommandProvider?.commands ?? [];
  }

  /** Sends a notification to a running server (dropped otherwise: it is state, resent later). */
  notify(method: string, params: object): void {
    if (this.client?.state === State.Running) void this.client.sendNotification(method, params);
  }

  executeCommand(command: string, args: unknown[]): Promise<unknown> {
    if (!this.client || this.client.state !== State.Running) {
      return Promise.reject(new Error(`NeuralMind (${this.folder.name}): the server is ${this.state}.`));
    }
    return this.client.sendRequest(ExecuteCommandRequest.type, { command, arguments: args });
  }

  async request<R>(method: string, params: object): Promise<R> {
    const client = this.client;
    if (!client || client.state !== State.Running) {
      const why = this.state === "missing" ? `${SERVER_NAME} is not installed` : `the server is ${this.state}`;
      throw new Error(`NeuralMind (${this.folder.name}): ${why}.`);
    }
    return client.sendRequest<R>(method, params);
  }

  async dispose(): Promise<void> {
    this.disposed = true;
    clearTimeout(this.restartTimer);
    this.generation++;
    await this.stopClient();
    this.state = "stopped";
  }
}

/** All folder servers, keyed by folder URI. */
export class ServerManager implements vscode.Disposable {
  private readonly servers = new Map<string, FolderServer>();
  private readonly changed = new vscode.EventEmitter<void>();
  readonly onDidChange = this.changed.event;
  private readonly decisionsChanged = new vscode.EventEmitter<void>();
  /** A server command changed decisions (restore/invalidate from a code action). */
  readonly onDidChangeDecisions = this.decisionsChanged.event;
  private readonly commandIds = new Set<string>();
  /** Lets the user complete a server command's arguments first (undefined: cancelled). */
  completeArguments: ((command: string, args: unknown[]) => Promise<unknown[] | undefined>) | undefined;
  private readonly commandRegistrations: vscode.Disposable[] = [];

  constructor(private readonly output: vscode.OutputChannel) {
    this.onDidChange(() => this.registerServerCommands());
  }

  /** Registers each server command id once, routed to the active editor's folder. */
  private registerServerCommands(): void {
    for (const server of this.all()) {
      if (!server.running) continue;
      for (const id of commandsToRegister(server.serverCommands(), this.commandIds)) {
        this.commandIds.add(id);
        this.commandRegistrations.push(
          vscode.commands.registerCommand(id, async (...args: unknown[]) => {
            const target = await this.pick();
            if (!target) return undefined;
            const full = this.completeArguments ? await this.completeArguments(id, args) : args;
            if (!full) return undefined;
            try {
              return await target.executeCommand(id, full);
            } catch (e) {
              void vscode.window.showErrorMessage(`NeuralMind: ${id} failed: ${e instanceof Error ? e.message : String(e)}`);
              return undefined;
            } finally {
              if (DECISION_CHANGING.test(id)) this.decisionsChanged.fire();
            }
          }),
        );
      }
    }
  }

  add(folder: vscode.WorkspaceFolder): void {
    const key = folder.uri.toString();
    if (this.servers.has(key) || folder.uri.scheme !== "file") return;
    const server = new FolderServer(folder, this.output, () => this.changed.fire());
    this.servers.set(key, server);
    void server.start();
  }

  async remove(folder: vscode.WorkspaceFolder): Promise<void> {
    const key = folder.uri.toString();
    const server = this.servers.get(key);
    this.servers.delete(key);
    await server?.dispose();
    this.changed.fire();
  }

  all(): FolderServer[] {
    return [...this.servers.values()];
  }

  forUri(uri: vscode.Uri | undefined): FolderServer | undefined {
    if (!uri) return undefined;
    const folder = vscode.workspace.getWorkspaceFolder(uri);
    return folder ? this.servers.get(folder.uri.toString()) : undefined;
  }

  fireDecisionsChanged(): void {
    this.decisionsChanged.fire();
  }

  /** The server of the active editor's folder, else the only one, else ask. */
  async pick(): Promise<FolderServer | undefined> {
    const fromEditor = this.forUri(vscode.window.activeTextEditor?.document.uri);
    if (fromEditor) return fromEditor;
    const all = this.all();
    if (all.length <= 1) return all[0];
    const folder = await vscode.window.showWorkspaceFolderPick({ placeHolder: "NeuralMind: which folder?" });
    return folder ? this.servers.get(folder.uri.toString()) : undefined;
  }

  /** For the status bar: the active editor's folder server, else the first. */
  current(): FolderServer | undefined {
    return this.forUri(vscode.window.activeTextEditor?.document.uri) ?? this.all()[0];
  }

  async dispose(): Promise<void> {
    await Promise.all(this.all().map((s) => s.dispose()));
    this.servers.clear();
    this.commandRegistrations.forEach((d) => d.dispose());
    this.changed.dispose();
    this.decisionsChanged.dispose();
  }
}
