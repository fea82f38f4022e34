// "Open observatory": only the server's loopback login URL is ever opened.
import { test } from "node:test";
import * as assert from "node:assert/strict";
import { copyLinkMessage, observatoryUrl } from "../src/observatory";

test("a loopback login URL is opened as given", () => {
  const url = "http://127.0.0.1:41234/observatory/login?ticket=abc&view=brain";
  assert.equal(observatoryUrl({ url }), url);
  assert.equal(observatoryUrl({ url: "http://localhost:9/observatory/login?ticket=x" }), "http://localhost:9/observatory/login?ticket=x");
});

test("anything else is refused with a message", () => {
  for (const bad of [undefined, null, {}, { url: 3 }, { url: "not a url" },
                     { url: "https://127.0.0.1:1/observatory/login?ticket=x" },
                     { url: "http://example.com/observatory/login?ticket=x" },
                     { url: "http://127.0.0.1:1/elsewhere" },
                     { url: "javascript:alert(1)" }]) {
    assert.throws(() => observatoryUrl(bad), /NeuralMind: /, JSON.stringify(bad));
  }
});

test("a browser-hosted window shows the whole link, which works once", () => {
  const url = "http://127.0.0.1:41234/observatory/login?ticket=abc";
  const message = copyLinkMessage(url);
  assert.ok(message.endsWith(url) && /once/.test(message), message);
});
