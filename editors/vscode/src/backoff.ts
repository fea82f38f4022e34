// Restart schedule for a crashed server: exponential delays, reset once a run has stayed
// up long enough to count as healthy. A server that crashes at start-up forever must not
// spin the CPU, and one that crashed once after hours must come back at once.

export interface BackoffOptions {
  baseMs?: number;
  maxMs?: number;
  /** A run that lasted this long resets the schedule. */
  healthyAfterMs?: number;
  /** After this many crashes in a row the user is told (restarts continue at maxMs). */
  notifyAfter?: number;
}

export class RestartBackoff {
  readonly baseMs: number;
  readonly maxMs: number;
  readonly healthyAfterMs: number;
  readonly notifyAfter: number;
  private consecutive = 0;
  private startedAt: number | undefined;

  constructor(opts: BackoffOptions = {}) {
    this.baseMs = opts.baseMs ?? 1000;
    this.maxMs = opts.maxMs ?? 60_000;
    this.healthyAfterMs = opts.healthyAfterMs ?? 180_000;
    this.notifyAfter = opts.notifyAfter ?? 5;
  }

  /** Record that the server (re)started at `now`. */
  started(now: number): void {
    this.startedAt = now;
  }

  /** Record a crash at `now`; returns how long to wait before the next start. */
  crashed(now: number): number {
    if (this.startedAt !== undefined && now - this.startedAt >= this.healthyAfterMs) this.consecutive = 0;
    this.consecutive += 1;
    const delay = this.baseMs * 2 ** (this.consecutive - 1);
    return Math.min(delay, this.maxMs);
  }

  /** Crashes since the last healthy run. */
  get crashesInARow(): number {
    return this.consecutive;
  }

  /** True exactly once per streak, when the streak reaches `notifyAfter`. */
  get shouldNotify(): boolean {
    return this.consecutive === this.notifyAfter;
  }

  reset(): void {
    this.consecutive = 0;
    this.startedAt = undefined;
  }
}
