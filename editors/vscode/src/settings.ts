// VS Code's `neuralmind.*` settings -> the server's configuration keys. The server reads
// snake_case keys under the "neuralmind" section; VS Code settings are camelCase.

export const SECTION = "neuralmind";

/** VS Code setting name -> server key, for every setting the server understands. */
export const SERVER_KEYS = {
  budget: "budget",
  exclude: "exclude",
  learning: "learning",
  debounceSeconds: "debounce_seconds",
  mcp: "mcp",
  mcpReadOnly: "mcp_read_only",
  editorState: "editor_state",
  mcpTools: "mcp_tools",
} as const;

export type ClientSettingName = keyof typeof SERVER_KEYS;

export interface ServerSettings {
  budget?: number;
  exclude?: string[];
  learning?: boolean;
  debounce_seconds?: number;
  mcp?: boolean;
  mcp_read_only?: boolean;
  editor_state?: boolean;
  mcp_tools?: string;
}

export interface Mapped {
  settings: ServerSettings;
  /** One line per value dropped because of its type; the server then uses its default. */
  problems: string[];
}

/** Reads each client setting through `get` and keeps only well-typed values. */
export function mapSettings(get: (name: ClientSettingName) => unknown): Mapped {
  const settings: ServerSettings = {};
  const problems: string[] = [];
  const bad = (name: string, want: string, value: unknown) =>
    problems.push(`neuralmind.${name} should be ${want}, got ${JSON.stringify(value)}; using the server's default.`);

  const budget = get("budget");
  if (budget !== undefined && budget !== null) {
    if (typeof budget === "number" && Number.isInteger(budget) && budget > 0) settings.budget = budget;
    else bad("budget", "a positive integer", budget);
  }
  const exclude = get("exclude");
  if (exclude !== undefined && exclude !== null) {
    if (Array.isArray(exclude) && exclude.every((g) => typeof g === "string")) {
      settings.exclude = exclude.map((g: string) => g.trim()).filter(Boolean);
    } else bad("exclude", "a list of glob strings", exclude);
  }
  const learning = get("learning");
  if (learning !== undefined && learning !== null) {
    if (typeof learning === "boolean") settings.learning = learning;
    else bad("learning", "true or false", learning);
  }
  const debounce = get("debounceSeconds");
  if (debounce !== undefined && debounce !== null) {
    if (typeof debounce === "number" && Number.isFinite(debounce) && debounce >= 0) settings.debounce_seconds = debounce;
    else bad("debounceSeconds", "a number of seconds >= 0", debounce);
  }
  const mcp = get("mcp");
  if (mcp !== undefined && mcp !== null) {
    if (typeof mcp === "boolean") settings.mcp = mcp;
    else bad("mcp", "true or false", mcp);
  }
  const readOnly = get("mcpReadOnly");
  if (readOnly !== undefined && readOnly !== null) {
    if (typeof readOnly === "boolean") settings.mcp_read_only = readOnly;
    else bad("mcpReadOnly", "true or false", readOnly);
  }
  const editorState = get("editorState");
  if (editorState !== undefined && editorState !== null) {
    if (typeof editorState === "boolean") settings.editor_state = editorState;
    else bad("editorState", "true or false", editorState);
  }
  const tools = get("mcpTools");
  if (tools !== undefined && tools !== null) {
    if (typeof tools === "string" && tools.trim()) settings.mcp_tools = tools.trim();
    else bad("mcpTools", "minimal, default, all or tool names", tools);
  }
  return { settings, problems };
}

/** What `initialize` carries in initializationOptions. */
export function initializationOptions(settings: ServerSettings): Record<string, unknown> {
  return { [SECTION]: settings };
}

/** The params of workspace/didChangeConfiguration. */
export function didChangeConfigurationParams(settings: ServerSettings): { settings: Record<string, unknown> } {
  return { settings: { [SECTION]: settings } };
}

/**
 * The answer to one workspace/configuration item: the server may ask for the whole
 * "neuralmind" section or for one key of it ("neuralmind.budget").
 */
export function configurationItem(section: string | undefined, settings: ServerSettings): unknown {
  if (!section) return { [SECTION]: settings };
  if (section === SECTION) return settings;
  if (section.startsWith(SECTION + ".")) {
    const key = section.slice(SECTION.length + 1);
    const serverKey = (SERVER_KEYS as Record<string, string>)[key] ?? key;
    return (settings as Record<string, unknown>)[serverKey] ?? null;
  }
  return undefined;
}

/** Settings whose change needs the server process restarted, not just reconfigured. */
export const RESTART_SETTINGS = ["serverPath"] as const;
