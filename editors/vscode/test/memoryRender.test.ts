// Memories as quick-pick rows and markdown pages.
import { test } from "node:test";
import * as assert from "node:assert/strict";
import { atomItems, atomMarkdown, emptyRecall } from "../src/memoryRender";

const ATOM = {
  id: "3092a4c9be32495c", type: "lesson", label: "Totals round once", text: "Per-line rounding drifted.",
  state: "proposed", status: "STALE", hubs: ["billing"], about: ["app/billing.py::total"], score: 1.234,
};

test("recall rows carry the label, the flags, the score and the id", () => {
  const [row] = atomItems([ATOM]);
  assert.equal(row.label, "Totals round once");
  assert.equal(row.description, "lesson, proposed, STALE · 1.23");
  assert.equal(row.detail, "Per-line rounding drifted.");
  assert.equal(row.id, ATOM.id);
  const [plain] = atomItems([{ ...ATOM, state: "active", status: undefined, score: undefined }]);
  assert.equal(plain.description, "lesson");
});

test("a memory page lists its hubs and what it is about; an empty recall says why", () => {
  const md = atomMarkdown(ATOM);
  assert.ok(md.startsWith("# Totals round once\n"));
  assert.ok(md.includes("`3092a4c9be32495c` · lesson · proposed"));
  assert.ok(md.includes("Hubs: billing") && md.includes("- `app/billing.py::total`"));
  assert.equal(emptyRecall({ mode: "keyword", context: "", tokens: 0, atoms: [], notice: "keyword-only" }, "x"),
    'NeuralMind: no memories for "x" (keyword-only).');
});
