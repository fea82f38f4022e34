// The editor state the extension sends: one folder's files only, clipped, LSP severities.
import { test } from "node:test";
import * as assert from "node:assert/strict";
import { codeText, Debouncer, EditorSnapshot, editorStateParams, lspSeverity, SELECTION_CHARS } from "../src/editorState";

const A = "file:///ws/a/app.py";
const B = "file:///ws/a/lib.py";
const OTHER = "file:///ws/b/other.py";
const inA = (uri: string) => uri.startsWith("file:///ws/a/");
const range = (l: number) => ({ start: { line: l, character: 0 }, end: { line: l + 1, character: 0 } });

const snap = (active: string | undefined): EditorSnapshot => ({
  activeFile: active,
  selection: { ...range(3), text: "x".repeat(SELECTION_CHARS + 10) },
  visibleRanges: [range(0)],
  openFiles: [A, OTHER, B, A],
  diagnostics: [{ range: range(3), message: "bad", severity: 1, source: "tsc", code: "2339" }],
});

test("a folder's server gets its own files, the selection clipped", () => {
  const p = editorStateParams(snap(A), inA);
  assert.equal(p.activeFile, A);
  assert.equal(p.selection?.text.length, SELECTION_CHARS);
  assert.deepEqual(p.selection?.start, { line: 3, character: 0 });
  assert.deepEqual(p.openFiles, [A, B]);
  assert.equal(p.diagnostics.length, 1);
  assert.equal(p.visibleRanges.length, 1);
});

test("another folder's active file sends no selection, ranges or diagnostics", () => {
  const p = editorStateParams(snap(OTHER), inA);
  assert.deepEqual(p, { activeFile: null, selection: null, visibleRanges: [], openFiles: [A, B], diagnostics: [] });
});

test("severities and codes translate from VS Code's shapes", () => {
  assert.deepEqual([0, 1, 2, 3].map(lspSeverity), [1, 2, 3, 4]);
  assert.equal(codeText({ value: 42, target: "https://x" }), "42");
  assert.equal(codeText("E1"), "E1");
  assert.equal(codeText(undefined), undefined);
});

test("the debouncer sends once after a burst", async () => {
  let calls = 0;
  const d = new Debouncer(20, () => calls++);
  for (let i = 0; i < 5; i++) d.trigger();
  await new Promise((r) => setTimeout(r, 60));
  assert.equal(calls, 1);
  d.trigger();
  d.dispose();
  await new Promise((r) => setTimeout(r, 40));
  assert.equal(calls, 1);
});
