// VS Code setting names and values -> the server's configuration keys.
import { test } from "node:test";
import * as assert from "node:assert/strict";
import { configurationItem, didChangeConfigurationParams, initializationOptions, mapSettings, ClientSettingName } from "../src/settings";

const from = (values: Partial<Record<ClientSettingName, unknown>>) => (name: ClientSettingName) => values[name];

test("every setting maps to its snake_case server key", () => {
  const { settings, problems } = mapSettings(
    from({ budget: 900, exclude: [" dist/** ", "", "*.min.js"], learning: false, debounceSeconds: 0.5, mcp: false, mcpReadOnly: true, editorState: false, mcpTools: " minimal " }),
  );
  assert.deepEqual(problems, []);
  assert.deepEqual(settings, {
    budget: 900,
    exclude: ["dist/**", "*.min.js"],
    learning: false,
    debounce_seconds: 0.5,
    mcp: false,
    mcp_read_only: true,
    editor_state: false,
    mcp_tools: "minimal",
  });
  assert.deepEqual(initializationOptions(settings), { neuralmind: settings });
  assert.deepEqual(didChangeConfigurationParams(settings), { settings: { neuralmind: settings } });
});

test("ill-typed values are dropped with a message naming the setting", () => {
  const { settings, problems } = mapSettings(from({ budget: -5, exclude: "dist/**", learning: "yes", debounceSeconds: Number.NaN, mcp: 1, mcpReadOnly: "no", editorState: "on", mcpTools: "" }));
  assert.deepEqual(settings, {});
  assert.equal(problems.length, 8);
  for (const name of ["budget", "exclude", "learning", "debounceSeconds", "mcp", "mcpReadOnly", "editorState", "mcpTools"]) {
    assert.ok(problems.some((p) => p.startsWith(`neuralmind.${name} `)), name);
  }
});

test("unset settings are not sent, so the server keeps its defaults", () => {
  assert.deepEqual(mapSettings(from({})).settings, {});
});

test("workspace/configuration items are answered per section and per key", () => {
  const s = { budget: 1200, debounce_seconds: 2 };
  assert.deepEqual(configurationItem("neuralmind", s), s);
  assert.equal(configurationItem("neuralmind.budget", s), 1200);
  assert.equal(configurationItem("neuralmind.debounceSeconds", s), 2);
  assert.equal(configurationItem("neuralmind.debounce_seconds", s), 2);
  assert.equal(configurationItem("neuralmind.mcp", s), null);
  assert.deepEqual(configurationItem(undefined, s), { neuralmind: s });
  assert.equal(configurationItem("python", s), undefined);
});
