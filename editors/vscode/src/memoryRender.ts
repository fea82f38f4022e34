// Memories as the user sees them: quick-pick rows and a markdown page. No `vscode` import:
// tested in Node.
import type { Atom, RecallResult } from "./protocol";

export interface AtomPick {
  label: string;
  description: string;
  detail: string;
  id: string;
}

/** One quick-pick row per recalled atom, best first. */
export function atomItems(atoms: Atom[]): AtomPick[] {
  return atoms.map((a) => {
    const flags = [a.type, a.state && a.state !== "active" ? a.state : "", a.status && a.status !== "ACTIVE" ? a.status : ""]
      .filter(Boolean)
      .join(", ");
    return {
      label: a.label,
      description: flags + (a.score !== undefined ? ` · ${a.score.toFixed(2)}` : ""),
      detail: a.text,
      id: a.id,
    };
  });
}

/** What to say when recall has nothing to show. */
export function emptyRecall(result: RecallResult, query: string): string {
  const why = result.notice ? ` (${result.notice})` : "";
  return `NeuralMind: no memories for "${query}"${why}.`;
}

/** A memory as a markdown page (for the preview the pick opens). */
export function atomMarkdown(a: Atom): string {
  const lines = [`# ${a.label}`, "", `\`${a.id}\` · ${a.type}${a.state ? ` · ${a.state}` : ""}`, "", a.text];
  if (a.hubs?.length) lines.push("", `Hubs: ${a.hubs.join(", ")}`);
  if (a.about?.length) lines.push("", "About:", ...a.about.map((t) => `- \`${t}\``));
  return lines.join("\n") + "\n";
}
