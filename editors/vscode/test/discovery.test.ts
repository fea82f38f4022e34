// Executable discovery against real files in a temporary directory.
import { test } from "node:test";
import * as assert from "node:assert/strict";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { discover, installCommand, notFoundMessage, scriptsFolders, siblingCli, SERVER_NAME } from "../src/discovery";

function tmp(): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), "nm-discovery-"));
}

function makeExec(file: string, mode = 0o755): string {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, "#!/bin/sh\nexit 0\n");
  fs.chmodSync(file, mode);
  return file;
}

test("the setting wins over the Python environment and PATH", () => {
  const root = tmp();
  const fromSetting = makeExec(path.join(root, "custom", SERVER_NAME));
  makeExec(path.join(root, "venv", "bin", SERVER_NAME));
  makeExec(path.join(root, "pathdir", SERVER_NAME));
  const d = discover(SERVER_NAME, {
    serverPath: fromSetting,
    pythonPath: path.join(root, "venv", "bin", "python"),
    env: { PATH: path.join(root, "pathdir") },
    platform: "linux",
  });
  assert.equal(d.command, fromSetting);
  assert.equal(d.source, "setting");
});

test("a relative or ${workspaceFolder} setting resolves against the folder", () => {
  const root = tmp();
  const exe = makeExec(path.join(root, ".venv", "bin", SERVER_NAME));
  for (const value of [`.venv/bin/${SERVER_NAME}`, `\${workspaceFolder}/.venv/bin/${SERVER_NAME}`]) {
    const d = discover(SERVER_NAME, { serverPath: value, workspaceFolder: root, env: { PATH: "" }, platform: "linux" });
    assert.equal(d.command, exe, value);
  }
});

test("a setting that points nowhere is an error, not a silent fallback to PATH", () => {
  const root = tmp();
  makeExec(path.join(root, "pathdir", SERVER_NAME));
  const d = discover(SERVER_NAME, {
    serverPath: path.join(root, "missing", SERVER_NAME),
    env: { PATH: path.join(root, "pathdir") },
    platform: "linux",
  });
  assert.equal(d.command, undefined);
  assert.match(d.settingError ?? "", /not an executable file/);
  assert.match(notFoundMessage(d, undefined, "linux"), /neuralmind\.serverPath/);
});

test("a non-executable file is not taken", () => {
  const root = tmp();
  makeExec(path.join(root, "venv", "bin", SERVER_NAME), 0o644);
  const good = makeExec(path.join(root, "pathdir", SERVER_NAME));
  const d = discover(SERVER_NAME, {
    pythonPath: path.join(root, "venv", "bin", "python"),
    env: { PATH: path.join(root, "pathdir") },
    platform: "linux",
  });
  assert.equal(d.command, good);
  assert.equal(d.source, "path");
});

test("the selected interpreter's scripts folder comes before PATH, given the interpreter or the env folder", () => {
  const root = tmp();
  const inVenv = makeExec(path.join(root, "venv", "bin", SERVER_NAME));
  makeExec(path.join(root, "pathdir", SERVER_NAME));
  const env = { PATH: path.join(root, "pathdir") };
  const byInterpreter = discover(SERVER_NAME, { pythonPath: path.join(root, "venv", "bin", "python3"), env, platform: "linux" });
  assert.equal(byInterpreter.command, inVenv);
  assert.equal(byInterpreter.source, "python");
  const byFolder = discover(SERVER_NAME, { pythonPath: path.join(root, "venv"), env, platform: "linux" });
  assert.equal(byFolder.command, inVenv);
});

test("PATH is searched in order and every candidate is reported when nothing is found", () => {
  const root = tmp();
  const a = path.join(root, "a");
  const b = path.join(root, "b");
  fs.mkdirSync(a);
  const second = makeExec(path.join(b, SERVER_NAME));
  const found = discover(SERVER_NAME, { env: { PATH: `${a}:${b}` }, platform: "linux" });
  assert.equal(found.command, second);
  const home = path.join(root, "home");
  const none = discover(SERVER_NAME, { pythonPath: path.join(root, "nope", "bin", "python"), env: { PATH: a }, home, platform: "linux" });
  assert.equal(none.command, undefined);
  assert.deepEqual(none.tried, [
    path.join(root, "nope", "bin", SERVER_NAME),
    path.join(a, SERVER_NAME),
    path.join(home, ".local", "bin", SERVER_NAME),
  ]);
  const msg = notFoundMessage(none, path.join(root, "nope", "bin", "python"), "linux");
  assert.match(msg, /was not found/);
  assert.ok(msg.includes(`${path.join(root, "nope", "bin", "python")} -m pip install`), msg);
  assert.match(msg, /select the executable/);
  assert.match(msg, /remote window .* Remote settings or the workspace settings: user settings are ignored there/);
});

test("~/.local/bin (pipx, pip --user) is looked at after PATH, once", () => {
  const root = tmp();
  const home = path.join(root, "home");
  const userBin = makeExec(path.join(home, ".local", "bin", SERVER_NAME));
  const empty = path.join(root, "empty");
  fs.mkdirSync(empty);
  const d = discover(SERVER_NAME, { env: { PATH: empty }, home, platform: "linux" });
  assert.equal(d.command, userBin);
  assert.equal(d.source, "user-bin");
  const onPath = makeExec(path.join(root, "pathdir", SERVER_NAME));
  assert.equal(discover(SERVER_NAME, { env: { PATH: path.join(root, "pathdir") }, home, platform: "linux" }).command, onPath);
  const listed = discover(SERVER_NAME, { env: { PATH: `${empty}:${path.join(home, ".local", "bin")}` }, home: path.join(root, "nobody"), platform: "linux" });
  assert.equal(listed.source, "path");
  const twice = discover("absent", { env: { PATH: path.join(home, ".local", "bin") }, home, platform: "linux" });
  assert.deepEqual(twice.tried, [path.join(home, ".local", "bin", "absent")]);
});

test("Windows: Scripts folder, PATHEXT and ; separators", () => {
  const seen: string[] = [];
  const exists = new Set(["C:\\envs\\proj\\Scripts\\neuralmind-lsp.exe"]);
  const d = discover(SERVER_NAME, {
    pythonPath: "C:\\envs\\proj\\Scripts\\python.exe",
    env: { PATH: "C:\\bin;D:\\tools", PATHEXT: ".COM;.EXE" },
    platform: "win32",
    isExecutable: (f) => {
      seen.push(f);
      return exists.has(f);
    },
  });
  assert.equal(d.command, "C:\\envs\\proj\\Scripts\\neuralmind-lsp.exe");
  assert.deepEqual(seen, ["C:\\envs\\proj\\Scripts\\neuralmind-lsp.com", "C:\\envs\\proj\\Scripts\\neuralmind-lsp.exe"]);
  assert.deepEqual(scriptsFolders("C:\\Python311\\python.exe", "win32", () => false), ["C:\\Python311", "C:\\Python311\\Scripts"]);
  assert.equal(siblingCli("C:\\envs\\proj\\Scripts\\neuralmind-lsp.exe", "win32"), "C:\\envs\\proj\\Scripts\\neuralmind.exe");
});

test("the CLI is looked up beside the server and the install command quotes paths with spaces", () => {
  assert.equal(siblingCli("/home/u/.venv/bin/neuralmind-lsp", "linux"), "/home/u/.venv/bin/neuralmind");
  assert.match(installCommand("/opt/my env/bin/python", "linux"), /^"\/opt\/my env\/bin\/python" -m pip install /);
  assert.match(installCommand(undefined, "linux"), /^python3 -m pip install /);
});
