// Builds the observatory page into ../neuralmind/observatory/static (package data: pip needs
// no Node). Deterministic: pinned versions (package-lock.json), no timestamps, no absolute
// paths, no source maps, so .ci/run can rebuild and compare with what is committed.
import { build } from "esbuild";
import { copyFileSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const out = join(here, "..", "neuralmind", "observatory", "static");
mkdirSync(out, { recursive: true });

const common = { bundle: true, minify: true, legalComments: "none", logLevel: "warning",
                 absWorkingDir: here, charset: "utf8" };
await build({ ...common, entryPoints: ["src/main.ts"], outfile: join(out, "app.js"),
              format: "iife", target: "es2022", platform: "browser" });
await build({ ...common, entryPoints: ["src/style.css"], outfile: join(out, "app.css") });
for (const name of ["index.html", "favicon.svg"]) copyFileSync(join(here, "src", name), join(out, name));

// The licences of what the bundle contains travel with it (NOTICE lists them too).
const shipped = ["sigma", "graphology", "graphology-utils", "events", "uplot"];
const licences = shipped.map((name) => {
  const pkg = JSON.parse(readFileSync(join(here, "node_modules", name, "package.json"), "utf8"));
  const file = ["LICENSE.txt", "LICENSE", "LICENSE.md"].map((f) => join(here, "node_modules", name, f))
    .find((f) => { try { readFileSync(f); return true; } catch { return false; } });
  return `${name} ${pkg.version} (${pkg.license})\n\n${readFileSync(file, "utf8").trim()}\n`;
});
writeFileSync(join(out, "LICENSES.txt"),
  "Third-party code bundled in app.js and app.css\n\n" + licences.join("\n" + "-".repeat(72) + "\n\n"));
