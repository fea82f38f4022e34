// "Copy MCP configuration": running the CLI and turning each outcome into one message.
import { test } from "node:test";
import * as assert from "node:assert/strict";
import { spawnSync } from "child_process";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { CLI_NAME, discover, siblingCli } from "../src/discovery";
import { interpretMcpConfig, runMcpConfig } from "../src/mcpConfig";

test("a missing CLI is named in the message", async () => {
  const missing = path.join(os.tmpdir(), "nm-no-such-dir", "neuralmind");
  const out = await runMcpConfig(missing, "vscode", os.tmpdir());
  assert.equal(out.ok, false);
  assert.ok(!out.ok && out.message.includes(missing));
});

test("argparse's unknown-command error becomes 'no mcp-config command yet'", () => {
  const err = Object.assign(new Error("Command failed"), { code: 2 });
  const out = interpretMcpConfig("neuralmind", err, "", "neuralmind: error: argument COMMAND: invalid choice: 'mcp-config' (choose from build, query)\n");
  assert.ok(!out.ok && /no `mcp-config` command yet/.test(out.message));
  const other = interpretMcpConfig("neuralmind", err, "", "neuralmind: error: no workspace here\n");
  assert.ok(!other.ok && other.message.endsWith("neuralmind: error: no workspace here"));
});

test("the real CLI's answer is copied, or its absence explained", async (t) => {
  const beside = process.env.NEURALMIND_LSP ? siblingCli(process.env.NEURALMIND_LSP) : undefined;
  const cli = beside && fs.existsSync(beside) ? beside : discover(CLI_NAME, {}).command;
  if (!cli) {
    t.skip("the neuralmind CLI is not installed (not on PATH, not beside $NEURALMIND_LSP)");
    return;
  }
  const help = spawnSync(cli, ["--help"], { encoding: "utf8" });
  const hasCommand = /mcp-config/.test(help.stdout + help.stderr);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "nm-mcp-"));
  const out = await runMcpConfig(cli, "generic", dir);
  if (hasCommand) {
    assert.ok(out.ok, out.ok ? "" : out.message);
    assert.match(out.ok ? out.text : "", /neuralmind/);
  } else {
    assert.ok(!out.ok && /no `mcp-config` command yet/.test(out.message), JSON.stringify(out));
  }
});
