// README, "A first session with curl" and "Asynchronous jobs": a location
// import from CSV polled to DONE and its results file, and an export of
// the actions log.
import assert from "node:assert/strict";
import { test } from "node:test";
import { multipart, newKey, type LoyaltyClient, type Schema } from "../dist/index.js";
import { admin, poll, skip } from "./env.js";

// finished polls the operation until it is DONE or FAILED.
function finished(a: LoyaltyClient, operationId: string): Promise<Schema<"Operation">> {
  return poll(
    () => a.GET("/operations/{operationId}", { params: { path: { operationId } } }),
    (op) => op.status === "DONE" || op.status === "FAILED",
  );
}

test("a location import polled to DONE, with its results", { skip }, async () => {
  const a = admin();
  const title = `Camden Cafe ${newKey().slice(0, 8)}`;
  const csv = `title,geo_longitude,geo_latitude,tags\n${title},-0.1426,51.5390,coffee|north\n`;
  const op = await a.POST("/locations/imports", {
    params: { query: { dryRun: false }, header: { "x-platform-req-nonce": newKey() } },
    body: { file: csv },
    bodySerializer: multipart,
  });
  const done = await finished(a, op._id);
  assert.equal(done.status, "DONE", JSON.stringify(done.error));
  assert.equal(done.result?.imported, 1);
  const results = await a.GET("/locations/imports/{fileId}", { params: { path: { fileId: op._id } }, parseAs: "text" });
  assert.match(results, new RegExp(title));
  const found = await a.GET("/locations", { params: { query: { title } } });
  assert.deepEqual(
    found.items.map((l) => l.title),
    [title],
  );
});

test("an actions export", { skip }, async () => {
  const a = admin();
  const now = Date.now();
  const op = await a.POST("/actions/exports", {
    params: { header: { "x-platform-req-nonce": newKey() } },
    body: {
      from: new Date(now - 24 * 3600_000).toISOString(),
      to: new Date(now + 3600_000).toISOString(),
      types: ["USER_CREATED", "LOCATION_CREATED"],
    },
  });
  const done = await finished(a, op._id);
  assert.equal(done.status, "DONE", JSON.stringify(done.error));
  const file = await a.GET("/actions/exports/{fileId}", { params: { path: { fileId: op._id } }, parseAs: "text" });
  const [header] = file.split("\n");
  assert.ok(header && header.length > 0, "the export has no header line");
});
