// "NeuralMind: Open observatory": the server mints a one-time login URL for the page it
// serves on loopback (neuralmind/observatory); the extension opens it in the browser.
// Only a loopback http URL of the observatory's login path is opened.

export const OBSERVATORY_METHOD = "neuralmind/observatory";

export function observatoryUrl(result: unknown): string {
  const url = typeof result === "object" && result !== null ? (result as { url?: unknown }).url : undefined;
  if (typeof url !== "string") throw new Error("NeuralMind: the server gave no observatory URL.");
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new Error(`NeuralMind: the server gave a malformed observatory URL: ${url}`);
  }
  const loopback = parsed.hostname === "127.0.0.1" || parsed.hostname === "localhost";
  if (parsed.protocol !== "http:" || !loopback || parsed.pathname !== "/observatory/login") {
    throw new Error(`NeuralMind: refusing to open a non-loopback observatory URL: ${url}`);
  }
  return url;
}

// A browser-hosted VS Code (code-server, a tunnel's web client) rewrites loopback links into
// its own proxy (`/proxy/PORT/...`), whose Host header the endpoint refuses by design (the
// DNS-rebinding check): there the link is shown to copy instead of opened.
export function copyLinkMessage(url: string): string {
  return `NeuralMind: the observatory is served on the server machine's loopback. Open this link ` +
    `in a browser there (or forward its port under the same number); it works once: ${url}`;
}
