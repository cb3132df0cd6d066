// verifyWebhook against the Standard Webhooks specification's published
// test vector and signatures made here: a rotation's two signatures, a
// tampered body or id, timestamps outside the tolerance, the header forms
// of Node and of fetch (no stack needed).
import assert from "node:assert/strict";
import { createHmac } from "node:crypto";
import { test } from "node:test";
import { verifyWebhook, WebhookVerificationError, type WebhookVerificationReason } from "../dist/webhooks.js";

const vector = {
  secret: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
  id: "msg_p5jXN8AQM9LWM0D4loKWxJek",
  timestamp: 1614265330,
  body: '{"test": 2432232314}',
  signature: "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=",
};
const other = "whsec_" + Buffer.from("second-secret-of-the-rotation!!").toString("base64");

// sign is the sender's side: the webhook-signature of body for each secret.
function sign(id: string, ts: number, body: string, ...secrets: string[]): string {
  return secrets
    .map((s) => "v1," + createHmac("sha256", Buffer.from(s.replace(/^whsec_/, ""), "base64")).update(`${id}.${ts}.${body}`).digest("base64"))
    .join(" ");
}

function headers(id: string, ts: number, signature: string): Record<string, string> {
  return { "webhook-id": id, "webhook-timestamp": String(ts), "webhook-signature": signature };
}

test("the specification's test vector verifies", () => {
  assert.equal(sign(vector.id, vector.timestamp, vector.body, vector.secret), vector.signature);
  for (const secret of [vector.secret, vector.secret.slice("whsec_".length)]) {
    const ev = verifyWebhook(secret, headers(vector.id, vector.timestamp, vector.signature), vector.body, { now: vector.timestamp * 1000 });
    assert.deepEqual(ev, { test: 2432232314 });
  }
});

test("each secret of a rotation verifies, and the event is parsed", () => {
  const now = Math.floor(Date.now() / 1000);
  const body = JSON.stringify({ id: "evt_1", type: "AWARD_GRANTED", timestamp: "2024-01-01T00:00:00.000Z", tenantId: "t1", userId: "u1", sequence: 7, data: { points: 5 } });
  const both = sign("msg_1", now, body, vector.secret, other);
  for (const secret of [vector.secret, other]) {
    const ev = verifyWebhook<{ points: number }>(secret, headers("msg_1", now, both), body);
    assert.equal(ev.type, "AWARD_GRANTED");
    assert.equal(ev.sequence, 7);
    assert.equal(ev.data.points, 5);
  }
  // fetch's Headers, Node's header names in any case with an array value, and bytes.
  const h = new Headers(headers("msg_1", now, both));
  assert.equal(verifyWebhook(other, h, new TextEncoder().encode(body)).id, "evt_1");
  const node = { "Webhook-Id": "msg_1", "WEBHOOK-TIMESTAMP": String(now), "webhook-signature": both.split(" ") };
  assert.equal(verifyWebhook(other, node, body).id, "evt_1");
});

test("refusals", () => {
  const now = 1_700_000_000;
  const body = '{"id":"evt_1","type":"AWARD_GRANTED","data":{"points":5}}';
  const ok = headers("msg_1", now, sign("msg_1", now, body, vector.secret));
  const cases: [string, string, Record<string, string>, string, WebhookVerificationReason, number?][] = [
    ["other secret", other, ok, body, "signature"],
    ["tampered body", vector.secret, ok, body.replace('"points":5', '"points":500'), "signature"],
    ["tampered id", vector.secret, { ...ok, "webhook-id": "msg_2" }, body, "signature"],
    ["other version", vector.secret, { ...ok, "webhook-signature": ok["webhook-signature"]!.replace("v1,", "v1a,") }, body, "signature"],
    ["no signature", vector.secret, { ...ok, "webhook-signature": "" }, body, "signature"],
    ["old timestamp", vector.secret, headers("msg_1", now - 301, sign("msg_1", now - 301, body, vector.secret)), body, "timestamp"],
    ["future timestamp", vector.secret, headers("msg_1", now + 301, sign("msg_1", now + 301, body, vector.secret)), body, "timestamp"],
    ["timestamp not seconds", vector.secret, { ...ok, "webhook-timestamp": "2023-11-14T22:13:20Z" }, body, "timestamp"],
    ["bad secret", "whsec_not base64!", ok, body, "secret"],
  ];
  for (const [name, secret, h, b, reason] of cases) {
    assert.throws(
      () => verifyWebhook(secret, h, b, { now: now * 1000 }),
      (err: unknown) => err instanceof WebhookVerificationError && err.reason === reason,
      name,
    );
  }
  // A tolerance of its own accepts an older timestamp.
  const old = headers("msg_1", now - 3600, sign("msg_1", now - 3600, body, vector.secret));
  assert.equal(verifyWebhook(vector.secret, old, body, { now: new Date(now * 1000), toleranceSeconds: 7200 }).id, "evt_1");
});
