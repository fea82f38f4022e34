// The crash-restart schedule.
import { test } from "node:test";
import * as assert from "node:assert/strict";
import { RestartBackoff } from "../src/backoff";

test("delays double up to the cap while the server keeps crashing", () => {
  const b = new RestartBackoff({ baseMs: 1000, maxMs: 8000, healthyAfterMs: 60_000 });
  let now = 0;
  const delays: number[] = [];
  for (let i = 0; i < 6; i++) {
    b.started(now);
    now += 500; // crashes half a second after each start
    delays.push(b.crashed(now));
    now += delays[delays.length - 1];
  }
  assert.deepEqual(delays, [1000, 2000, 4000, 8000, 8000, 8000]);
  assert.equal(b.crashesInARow, 6);
});

test("a healthy run resets the schedule", () => {
  const b = new RestartBackoff({ baseMs: 1000, healthyAfterMs: 60_000 });
  b.started(0);
  b.crashed(10);
  b.started(2000);
  assert.equal(b.crashed(3000), 2000);
  b.started(10_000);
  assert.equal(b.crashed(10_000 + 60_000), 1000);
  assert.equal(b.crashesInARow, 1);
});

test("the user is told once per streak", () => {
  const b = new RestartBackoff({ notifyAfter: 3 });
  const told: boolean[] = [];
  for (let i = 0; i < 5; i++) {
    b.started(i);
    b.crashed(i);
    told.push(b.shouldNotify);
  }
  assert.deepEqual(told, [false, false, true, false, false]);
});
