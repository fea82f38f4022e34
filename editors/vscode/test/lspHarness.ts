// Drives the real `neuralmind-lsp --stdio` over JSON-RPC, as the extension's language
// client does, but without VS Code: the client-side requests a server may send are answered
// the way VS Code answers them.
import { ChildProcess, spawn, spawnSync } from "child_process";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { pathToFileURL } from "url";
import { createMessageConnection, MessageConnection, StreamMessageReader, StreamMessageWriter } from "vscode-jsonrpc/node";
import { discover, SERVER_NAME } from "../src/discovery";
import { configurationItem, initializationOptions, ServerSettings } from "../src/settings";

export interface FoundServer {
  command?: string;
  /** Why the integration tests cannot run (only: the server does not exist yet). */
  skip?: string;
}

/** $NEURALMIND_LSP, else PATH. */
export function findServer(): FoundServer {
  const fromEnv = process.env.NEURALMIND_LSP;
  const command = fromEnv && fs.existsSync(fromEnv) ? fromEnv : discover(SERVER_NAME, {}).command;
  if (!command) return { skip: `${SERVER_NAME} not found ($NEURALMIND_LSP unset and not on PATH): the server is not installed yet` };
  return { command };
}

/** True when the installed entry point is the placeholder from before the server landed. */
export function notYetAvailable(stderr: string): boolean {
  return /not yet available|No module named 'neuralmind\.lsp/.test(stderr);
}

export function git(cwd: string, ...args: string[]): string {
  const r = spawnSync("git", args, {
    cwd,
    encoding: "utf8",
    env: {
      ...process.env,
      GIT_AUTHOR_NAME: "Test",
      GIT_AUTHOR_EMAIL: "test@example.com",
      GIT_COMMITTER_NAME: "Test",
      GIT_COMMITTER_EMAIL: "test@example.com",
      GIT_CONFIG_NOSYSTEM: "1",
      HOME: cwd,
    },
  });
  if (r.status !== 0) throw new Error(`git ${args.join(" ")} failed: ${r.stderr}`);
  return r.stdout.trim();
}

/** A small git repository with two unrelated modules and one committed history. */
export function makeWorkspace(files: Record<string, string>): string {
  const root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "nm-vscode-it-")));
  for (const [rel, text] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(root, rel)), { recursive: true });
    fs.writeFileSync(path.join(root, rel), text);
  }
  git(root, "init", "-q", "-b", "main");
  git(root, "add", "-A");
  git(root, "commit", "-q", "-m", "initial");
  return root;
}

export const uriOf = (root: string, rel: string): string => pathToFileURL(path.join(root, rel)).href;

export class Session {
  readonly connection: MessageConnection;
  readonly diagnostics = new Map<string, { code?: string | number; message: string; severity?: number }[]>();
  readonly progressEnded = new Set<string | number>();
  readonly messages: string[] = [];
  readonly shownDocuments: { uri: string; selection?: unknown }[] = [];
  stderr = "";
  initializeResult: { capabilities: { executeCommandProvider?: { commands?: string[] } } } | undefined;
  private readonly versions = new Map<string, number>();
  readonly exited: Promise<number | null>;

  constructor(
    readonly proc: ChildProcess,
    readonly root: string,
    private settings: ServerSettings,
  ) {
    proc.stderr!.on("data", (d: Buffer) => (this.stderr += d.toString()));
    this.exited = new Promise((resolve) => {
      proc.on("exit", (code) => resolve(code));
      proc.on("error", (e) => {
        this.stderr += String(e);
        resolve(null);
      });
    });
    this.connection = createMessageConnection(new StreamMessageReader(proc.stdout!), new StreamMessageWriter(proc.stdin!));
    const c = this.connection;
    c.onRequest("window/workDoneProgress/create", () => null);
    c.onRequest("client/registerCapability", () => null);
    c.onRequest("client/unregisterCapability", () => null);
    c.onRequest("workspace/configuration", (p: { items: { section?: string }[] }) => p.items.map((i) => configurationItem(i.section, this.settings) ?? null));
    c.onRequest("workspace/workspaceFolders", () => [{ uri: pathToFileURL(root).href, name: path.basename(root) }]);
    c.onRequest("window/showMessageRequest", () => null);
    c.onRequest("window/showDocument", (p: { uri: string; selection?: unknown }) => {
      this.shownDocuments.push(p);
      return { success: true };
    });
    c.onRequest("workspace/diagnostic/refresh", () => null);
    c.onNotification("$/progress", (p: { token: string | number; value: { kind: string } }) => {
      if (p.value?.kind === "end") this.progressEnded.add(p.token);
    });
    c.onNotification("textDocument/publishDiagnostics", (p: { uri: string; diagnostics: never[] }) => this.diagnostics.set(p.uri, p.diagnostics));
    c.onNotification("window/showMessage", (p: { message: string }) => this.messages.push(p.message));
    c.onNotification("window/logMessage", () => undefined);
    c.listen();
  }

  static async start(command: string, root: string, settings: ServerSettings): Promise<Session> {
    const proc = spawn(command, ["--stdio"], { cwd: root, stdio: ["pipe", "pipe", "pipe"] });
    const s = new Session(proc, root, settings);
    const rootUri = pathToFileURL(root).href;
    const exitedEarly = s.exited.then((code) => {
      throw new Error(`${command} exited (code ${code}) before answering initialize:\n${s.stderr}`);
    });
    const init = s.connection.sendRequest("initialize", {
      processId: process.pid,
      clientInfo: { name: "neuralmind-vscode-integration-test" },
      rootUri,
      rootPath: root,
      workspaceFolders: [{ uri: rootUri, name: path.basename(root) }],
      initializationOptions: initializationOptions(settings),
      capabilities: {
        window: { workDoneProgress: true, showMessage: {}, showDocument: { support: true } },
        workspace: {
          configuration: true,
          workspaceFolders: true,
          didChangeConfiguration: { dynamicRegistration: true },
          didChangeWatchedFiles: { dynamicRegistration: true },
          symbol: {},
        },
        textDocument: {
          synchronization: { dynamicRegistration: true, didSave: true, willSave: false },
          publishDiagnostics: { relatedInformation: true, codeDescriptionSupport: true, dataSupport: true },
          hover: { contentFormat: ["markdown", "plaintext"] },
          codeAction: { codeActionLiteralSupport: { codeActionKind: { valueSet: ["quickfix"] } } },
        },
      },
    });
    exitedEarly.catch(() => undefined);
    s.initializeResult = (await withTimeout(Promise.race([init, exitedEarly]), 30_000, "initialize")) as Session["initializeResult"];
    await s.connection.sendNotification("initialized", {});
    return s;
  }

  request<R>(method: string, params: object): Promise<R> {
    return this.connection.sendRequest<R>(method, params);
  }

  open(rel: string): void {
    const uri = uriOf(this.root, rel);
    this.versions.set(uri, 1);
    const text = fs.readFileSync(path.join(this.root, rel), "utf8");
    void this.connection.sendNotification("textDocument/didOpen", { textDocument: { uri, languageId: "python", version: 1, text } });
  }

  /** Appends `line` to the file on disk and tells the server as an editor would: change, save. */
  editAndSave(rel: string, line: string): void {
    const uri = uriOf(this.root, rel);
    const file = path.join(this.root, rel);
    const text = fs.readFileSync(file, "utf8") + line + "\n";
    fs.writeFileSync(file, text);
    const version = (this.versions.get(uri) ?? 1) + 1;
    this.versions.set(uri, version);
    void this.connection.sendNotification("textDocument/didChange", { textDocument: { uri, version }, contentChanges: [{ text }] });
    void this.connection.sendNotification("textDocument/didSave", { textDocument: { uri }, text });
  }

  async stop(): Promise<number | null> {
    try {
      await withTimeout(this.connection.sendRequest("shutdown"), 5000, "shutdown");
      await this.connection.sendNotification("exit");
    } catch {
      // the exit code below tells what happened
    }
    const code = await withTimeout(this.exited, 5000, "server exit").catch(() => {
      this.proc.kill("SIGKILL");
      return -1;
    });
    this.connection.dispose();
    return code;
  }
}

export function withTimeout<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout;
  return Promise.race([
    p.finally(() => clearTimeout(timer)),
    new Promise<T>((_, reject) => (timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms waiting for ${what}`)), ms))),
  ]);
}

/** Polls `probe` until it returns a value (not undefined) or the deadline passes. */
export async function until<T>(what: string, ms: number, probe: () => Promise<T | undefined>, everyMs = 100): Promise<T> {
  const deadline = Date.now() + ms;
  let last: unknown;
  for (;;) {
    try {
      const v = await probe();
      if (v !== undefined) return v;
    } catch (e) {
      last = e;
    }
    if (Date.now() > deadline) throw new Error(`timed out after ${ms} ms waiting for ${what}${last ? `: ${String(last)}` : ""}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}
