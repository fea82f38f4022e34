// "Copy MCP configuration": runs `neuralmind mcp-config --client <name>` from the same
// environment as the server and turns every failure into one clear sentence.
import { execFile } from "child_process";

export type McpClient = "vscode" | "claude" | "cursor" | "generic";
export const MCP_CLIENTS: McpClient[] = ["vscode", "claude", "cursor", "generic"];

export type McpConfigOutcome = { ok: true; text: string } | { ok: false; message: string };

export function mcpConfigArgs(client: McpClient): string[] {
  return ["mcp-config", "--client", client];
}

/** Interprets how the CLI ended; separate from spawning so each case is testable. */
export function interpretMcpConfig(
  cli: string,
  error: (Error & { code?: string | number | null }) | null,
  stdout: string,
  stderr: string,
): McpConfigOutcome {
  if (error && error.code === "ENOENT") {
    return { ok: false, message: `NeuralMind: the CLI "${cli}" was not found; install the neuralmind package in this environment.` };
  }
  if (error) {
    if (/invalid choice: 'mcp-config'|unrecognized arguments|No such command/i.test(stderr)) {
      return {
        ok: false,
        message:
          "NeuralMind: this version of the neuralmind package has no `mcp-config` command yet; update the package, " +
          "then run the command again.",
      };
    }
    const first = (stderr || error.message).trim().split("\n").pop() ?? "";
    return { ok: false, message: `NeuralMind: \`neuralmind mcp-config\` failed: ${first}` };
  }
  const text = stdout.trim();
  if (!text) return { ok: false, message: "NeuralMind: `neuralmind mcp-config` printed nothing." };
  return { ok: true, text };
}

export function runMcpConfig(cli: string, client: McpClient, cwd: string, timeoutMs = 20_000): Promise<McpConfigOutcome> {
  return new Promise((resolve) => {
    execFile(cli, mcpConfigArgs(client), { cwd, timeout: timeoutMs, windowsHide: true }, (error, stdout, stderr) => {
      resolve(interpretMcpConfig(cli, error, String(stdout), String(stderr)));
    });
  });
}
