// Which of the server's executeCommand ids the extension registers itself. The language
// client would register them once per client, which fails for the second folder of a
// multi-root window ("command already exists") and for any id the extension contributes
// itself; so the extension registers each id once and routes it to the right folder.

/** Every command the extension contributes in package.json. */
export const OWN_COMMANDS = [
  "neuralmind.ask",
  "neuralmind.nextLikely",
  "neuralmind.recordDecision",
  "neuralmind.showDecisions",
  "neuralmind.refreshDecisions",
  "neuralmind.openDecision",
  "neuralmind.recall",
  "neuralmind.remember",
  "neuralmind.memoryInbox",
  "neuralmind.copyMcpConfig",
  "neuralmind.openObservatory",
  "neuralmind.showStatus",
  "neuralmind.showOutput",
  "neuralmind.restartServer",
  "neuralmind.reviewChanges",
] as const;

/** Server commands that change decisions: the decisions view refreshes after them. */
export const DECISION_CHANGING = /^neuralmind\.decisions?\.(restore|invalidate|record|amend|reaffirm|supersede)$/;

/**
 * The advertised ids still to register: not registered yet, not one of the extension's own
 * (the extension's UI command wins; the server's id stays reachable through its request).
 */
export function commandsToRegister(advertised: readonly string[] | undefined, registered: ReadonlySet<string>): string[] {
  const own = new Set<string>(OWN_COMMANDS);
  const out: string[] = [];
  for (const id of advertised ?? []) {
    if (typeof id !== "string" || !id || own.has(id) || registered.has(id) || out.includes(id)) continue;
    out.push(id);
  }
  return out;
}
