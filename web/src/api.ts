// The page's JSON requests, relative to /observatory/ (same origin: the session cookie goes
// along by itself; the server refuses other origins).

export class ApiError extends Error {
  constructor(public status: number, public code: string, message: string) {
    super(message);
  }
}

const listeners: ((e: ApiError) => void)[] = [];
export function onAuthError(fn: (e: ApiError) => void): void {
  listeners.push(fn);
}

async function parse<T>(resp: Response): Promise<T> {
  if (resp.ok) return (await resp.json()) as T;
  let code = "http_" + resp.status;
  let message = resp.statusText;
  try {
    const text = await resp.text();
    try {
      const body = JSON.parse(text) as { error?: string; message?: string };
      code = body.error ?? code;
      message = body.message ?? message;
    } catch {
      message = text || message;
    }
  } catch { /* keep the status */ }
  const error = new ApiError(resp.status, code, message);
  if (resp.status === 401) listeners.forEach((fn) => fn(error));
  throw error;
}

export async function get<T>(route: string, params?: Record<string, string>): Promise<T> {
  const query = params ? "?" + new URLSearchParams(params).toString() : "";
  return parse<T>(await fetch(`api/${route}${query}`, { credentials: "same-origin" }));
}

export async function post<T>(route: string, body: unknown): Promise<T> {
  return parse<T>(await fetch(`api/${route}`, {
    method: "POST", credentials: "same-origin",
    headers: { "content-type": "application/json" }, body: JSON.stringify(body),
  }));
}
