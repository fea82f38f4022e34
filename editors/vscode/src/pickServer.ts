// "Select executable…" in the not-found notification: a file dialog, the pick checked the
// way discovery checks the setting, then saved as `neuralmind.serverPath`.
import * as vscode from "vscode";
import { discover, SERVER_NAME } from "./discovery";
import { SECTION } from "./settings";

/**
 * Returns true when a usable executable was picked and saved. The setting is written to the
 * Global target: for this machine-overridable setting VS Code puts it in the remote's
 * settings in a remote window (where a local user value would be ignored), else in the
 * user settings. The configuration change restarts the folder's server (extension.ts).
 */
export async function pickServerExecutable(folder: vscode.WorkspaceFolder): Promise<boolean> {
  const picked = await vscode.window.showOpenDialog({
    title: `Select the ${SERVER_NAME} executable`,
    openLabel: `Use this ${SERVER_NAME}`,
    canSelectFiles: true,
    canSelectFolders: false,
    canSelectMany: false,
    defaultUri: folder.uri,
  });
  if (!picked?.length) return false;
  const file = picked[0].fsPath;
  const check = discover(SERVER_NAME, { serverPath: file, workspaceFolder: folder.uri.fsPath });
  if (!check.command) {
    void vscode.window.showErrorMessage(`NeuralMind: ${check.settingError ?? `${file} cannot be used.`}`);
    return false;
  }
  await vscode.workspace.getConfiguration(SECTION, folder.uri).update("serverPath", check.command, vscode.ConfigurationTarget.Global);
  return true;
}
