// Registering the server's executeCommand ids: once, and never over the extension's own.
import { test } from "node:test";
import * as assert from "node:assert/strict";
import * as fs from "fs";
import * as path from "path";
import { commandsToRegister, DECISION_CHANGING, OWN_COMMANDS } from "../src/commands";

test("the own-command list is exactly what package.json contributes", () => {
  const pkg = JSON.parse(fs.readFileSync(path.join(__dirname, "..", "..", "package.json"), "utf8"));
  const contributed = pkg.contributes.commands.map((c: { command: string }) => c.command).sort();
  assert.deepEqual(contributed, [...OWN_COMMANDS].sort());
});

test("own, already registered and repeated ids are skipped", () => {
  const advertised = ["neuralmind.nextLikely", "neuralmind.decision.restore", "neuralmind.decision.restore", "neuralmind.status", ""];
  assert.deepEqual(commandsToRegister(advertised, new Set(["neuralmind.status"])), ["neuralmind.decision.restore"]);
  assert.deepEqual(commandsToRegister(undefined, new Set()), []);
});

test("restore and invalidate refresh the decisions view; show does not", () => {
  assert.ok(DECISION_CHANGING.test("neuralmind.decision.restore"));
  assert.ok(DECISION_CHANGING.test("neuralmind.decision.invalidate"));
  assert.ok(DECISION_CHANGING.test("neuralmind.decisions.record"));
  assert.ok(DECISION_CHANGING.test("neuralmind.decision.reaffirm"));
  assert.ok(DECISION_CHANGING.test("neuralmind.decision.supersede"));
  assert.ok(!DECISION_CHANGING.test("neuralmind.decision.show"));
});
