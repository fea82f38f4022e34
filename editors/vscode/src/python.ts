// The interpreter of the Python environment the user selected for a folder: the Python
// extension's API when it is installed, else the `python.defaultInterpreterPath` setting.
import * as vscode from "vscode";

/** The slice of the ms-python.python API used here (see @vscode/python-extension). */
interface PythonApi {
  environments?: {
    getActiveEnvironmentPath(resource?: vscode.Uri): { path: string } | undefined;
    resolveEnvironment(env: { path: string } | string): Promise<{ executable?: { uri?: vscode.Uri } } | undefined>;
  };
}

export async function pythonInterpreter(folder: vscode.WorkspaceFolder): Promise<string | undefined> {
  const ext = vscode.extensions.getExtension<PythonApi>("ms-python.python");
  if (ext) {
    try {
      const api = ext.isActive ? ext.exports : await ext.activate();
      const active = api?.environments?.getActiveEnvironmentPath(folder.uri);
      if (active?.path) {
        const resolved = await api!.environments!.resolveEnvironment(active);
        return resolved?.executable?.uri?.fsPath ?? active.path;
      }
    } catch {
      // The Python extension failed or changed its API: fall back to the setting.
    }
  }
  const setting = vscode.workspace.getConfiguration("python", folder.uri).get<string>("defaultInterpreterPath");
  return setting && setting !== "python" ? setting : undefined;
}
