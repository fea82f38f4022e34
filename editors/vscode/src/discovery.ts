// Finding the `neuralmind-lsp` executable: the user's setting first, then the scripts
// folder of the selected Python environment, then PATH, then ~/.local/bin (where pipx and
// `pip install --user` put it: an editor's extension host gets its PATH from a login
// shell, which often lacks it). Free of `vscode` so it is tested under plain Node against
// real files.
import * as fs from "fs";
import * as os from "os";
import * as path from "path";

export const SERVER_NAME = "neuralmind-lsp";
export const CLI_NAME = "neuralmind";

/**
 * What `pip install` is given. The PyPI name "neuralmind" belongs to an unrelated earlier
 * project, so the install comes from a NeuralMind checkout (the README's install line).
 */
export const INSTALL_SOURCE = "<path to your NeuralMind checkout>";

export type Source = "setting" | "python" | "path" | "user-bin";

export interface DiscoveryInput {
  /** `neuralmind.serverPath`, as the user wrote it (may be relative, `~`, `${workspaceFolder}`). */
  serverPath?: string;
  /** Interpreter or environment folder of the selected Python environment. */
  pythonPath?: string;
  /** The workspace folder the server will serve; relative paths resolve against it. */
  workspaceFolder?: string;
  /** PATH-like environment (defaults to process.env). */
  env?: NodeJS.ProcessEnv;
  /** The user's home folder, for ~/.local/bin (defaults to os.homedir()). */
  home?: string;
  platform?: NodeJS.Platform;
  isExecutable?: (file: string) => boolean;
}

export interface Discovery {
  /** The executable found, or undefined. */
  command?: string;
  source?: Source;
  /** Every place looked at, in order, for the "not found" message. */
  tried: string[];
  /** A problem with the user's explicit setting (it wins over every fallback). */
  settingError?: string;
}

export function defaultIsExecutable(file: string): boolean {
  try {
    const stat = fs.statSync(file);
    if (!stat.isFile()) return false;
    if (process.platform === "win32") return true;
    fs.accessSync(file, fs.constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

function pathApi(platform: NodeJS.Platform): typeof path.posix {
  return platform === "win32" ? path.win32 : path.posix;
}

/** Names an executable may carry on this platform (PATHEXT on Windows). */
export function executableNames(name: string, platform: NodeJS.Platform, env: NodeJS.ProcessEnv): string[] {
  if (platform !== "win32") return [name];
  const exts = (env.PATHEXT ?? ".EXE;.CMD;.BAT").split(";").filter(Boolean);
  return [...exts.map((e) => name + e.toLowerCase()), name];
}

/** Expands `~` and `${workspaceFolder}`, and resolves a relative path against the folder. */
export function expandUserPath(value: string, workspaceFolder: string | undefined, platform: NodeJS.Platform): string {
  const p = pathApi(platform);
  let out = value.trim();
  if (workspaceFolder) out = out.split("${workspaceFolder}").join(workspaceFolder);
  if (out === "~" || out.startsWith("~/") || out.startsWith("~\\")) out = p.join(os.homedir(), out.slice(1));
  if (!p.isAbsolute(out) && workspaceFolder && (out.includes("/") || out.includes("\\"))) {
    out = p.resolve(workspaceFolder, out);
  }
  return out;
}

/**
 * Scripts folders of a Python environment given its interpreter or its folder: the
 * interpreter's own folder (venv: bin/ or Scripts/), plus Scripts/ beside a Windows base
 * interpreter, plus bin/ or Scripts/ when given the environment folder itself.
 */
export function scriptsFolders(pythonPath: string, platform: NodeJS.Platform, isDir: (p: string) => boolean): string[] {
  const p = pathApi(platform);
  const scriptsDir = platform === "win32" ? "Scripts" : "bin";
  const folders: string[] = [];
  if (isDir(pythonPath)) {
    folders.push(p.join(pythonPath, scriptsDir));
  } else {
    const dir = p.dirname(pythonPath);
    folders.push(dir);
    if (platform === "win32" && p.basename(dir).toLowerCase() !== "scripts") folders.push(p.join(dir, "Scripts"));
  }
  return folders;
}

function defaultIsDir(p: string): boolean {
  try {
    return fs.statSync(p).isDirectory();
  } catch {
    return false;
  }
}

/** Looks for `name` in the setting, the Python environment, then PATH. */
export function discover(name: string, input: DiscoveryInput): Discovery {
  const platform = input.platform ?? process.platform;
  const env = input.env ?? process.env;
  const isExec = input.isExecutable ?? defaultIsExecutable;
  const p = pathApi(platform);
  const names = executableNames(name, platform, env);
  const tried: string[] = [];

  const firstIn = (dir: string): string | undefined => {
    for (const n of names) {
      const candidate = p.join(dir, n);
      tried.push(candidate);
      if (isExec(candidate)) return candidate;
    }
    return undefined;
  };

  const setting = input.serverPath?.trim();
  if (setting) {
    const expanded = expandUserPath(setting, input.workspaceFolder, platform);
    if (p.isAbsolute(expanded)) {
      tried.push(expanded);
      if (isExec(expanded)) return { command: expanded, source: "setting", tried };
      return {
        tried,
        settingError: `neuralmind.serverPath points to "${expanded}", which is not an executable file.`,
      };
    }
    // A bare command name in the setting: look it up on PATH like a shell would.
    const onPath = searchPath(expanded, platform, env, isExec, tried);
    if (onPath) return { command: onPath, source: "setting", tried };
    return { tried, settingError: `neuralmind.serverPath is "${setting}", which is not on PATH.` };
  }

  const python = input.pythonPath?.trim();
  if (python && (p.isAbsolute(python) || python.includes("/") || python.includes("\\"))) {
    const interpreter = expandUserPath(python, input.workspaceFolder, platform);
    for (const dir of scriptsFolders(interpreter, platform, defaultIsDir)) {
      const found = firstIn(dir);
      if (found) return { command: found, source: "python", tried };
    }
  }

  const onPath = searchPath(name, platform, env, isExec, tried);
  if (onPath) return { command: onPath, source: "path", tried };

  const home = input.home ?? os.homedir();
  if (home) {
    const userBin = p.join(home, ".local", "bin");
    if (!tried.some((t) => p.dirname(t) === userBin)) {
      const found = firstIn(userBin);
      if (found) return { command: found, source: "user-bin", tried };
    }
  }
  return { tried };
}

function searchPath(
  name: string,
  platform: NodeJS.Platform,
  env: NodeJS.ProcessEnv,
  isExec: (f: string) => boolean,
  tried: string[],
): string | undefined {
  const p = pathApi(platform);
  const pathVar = env.PATH ?? env.Path ?? "";
  const sep = platform === "win32" ? ";" : ":";
  for (const dir of pathVar.split(sep).filter(Boolean)) {
    for (const n of executableNames(name, platform, env)) {
      const candidate = p.join(dir, n);
      tried.push(candidate);
      if (isExec(candidate)) return candidate;
    }
  }
  return undefined;
}

/** The `neuralmind` CLI that sits beside a found `neuralmind-lsp` (same environment). */
export function siblingCli(serverCommand: string, platform: NodeJS.Platform = process.platform): string {
  const p = pathApi(platform);
  const ext = platform === "win32" ? p.extname(serverCommand) : "";
  return p.join(p.dirname(serverCommand), CLI_NAME + ext);
}

/** The exact command that installs the server into the environment the user selected. */
export function installCommand(pythonPath: string | undefined, platform: NodeJS.Platform = process.platform): string {
  const python = pythonPath && pythonPath.trim() ? pythonPath.trim() : platform === "win32" ? "py" : "python3";
  const quoted = /\s/.test(python) ? `"${python}"` : python;
  return `${quoted} -m pip install "${INSTALL_SOURCE}"`;
}

/**
 * Where `neuralmind.serverPath` takes effect. It is machine-overridable: in a remote window
 * (code-server, Remote-SSH, WSL, dev containers) the value in the local user settings is
 * ignored, so it belongs in the remote's settings (or the workspace's).
 */
export const SERVER_PATH_NOTE =
  'In a remote window (code-server, Remote-SSH, WSL, containers) set "neuralmind.serverPath" in the Remote settings or the workspace settings: user settings are ignored there.';

/** The one-paragraph message shown when no executable was found. */
export function notFoundMessage(d: Discovery, pythonPath: string | undefined, platform: NodeJS.Platform = process.platform): string {
  if (d.settingError) {
    return `NeuralMind: ${d.settingError} Fix the setting or clear it to search the Python environment and PATH. ${SERVER_PATH_NOTE}`;
  }
  return (
    `NeuralMind: the language server "${SERVER_NAME}" was not found in the selected Python environment, on PATH or in ~/.local/bin. ` +
    `Install it with: ${installCommand(pythonPath, platform)} — or select the executable (it sets "neuralmind.serverPath"). ` +
    SERVER_PATH_NOTE
  );
}
