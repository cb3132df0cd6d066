// The SDK's own behaviour against a fake fetch (no stack needed): headers
// of the tenant and the auth schemes, the Idempotency-Key and its reuse on
// retries, which answers and failures are retried, Retry-After, paging and
// errors.
import assert from "node:assert/strict";
import { test } from "node:test";
import { API_VERSION, ApiError, createClient, type ClientOptions } from "../dist/index.js";

type Reply = Response | Error;

// fake answers the replies in order and records the requests it was sent.
function fake(...replies: Reply[]) {
  const seen: Request[] = [];
  const fetch = async (r: Request) => {
    seen.push(r);
    const next = replies.shift();
    if (!next) throw new Error(`unexpected request ${r.method} ${r.url}`);
    if (next instanceof Error) throw next;
    return next;
  };
  return { seen, fetch };
}

function json(status: number, body: unknown, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json", ...headers } });
}

const base = { baseUrl: "http://api.test", tenant: "t1", retry: { baseDelayMs: 1 } } satisfies Partial<ClientOptions>;

test("headers of the tenant, the version and each auth scheme", async () => {
  const cases: [string, ClientOptions["auth"], Record<string, string | null>][] = [
    ["service key", { serviceKey: "k" }, { "x-service-auth-token": "k", authorization: null }],
    ["session", { session: "s" }, { authorization: "Token s" }],
    ["bearer session", { session: "s", scheme: "Bearer" }, { authorization: "Bearer s" }],
    ["basic", { basic: { id: "ada@example.com", password: "pw", provider: "EMAIL" } }, { authorization: `Basic ${btoa("ada@example.com:pw")}`, authprovider: "EMAIL" }],
    ["none", undefined, { authorization: null, "x-service-auth-token": null }],
  ];
  for (const [name, auth, want] of cases) {
    const f = fake(json(200, { _id: "x" }));
    await createClient({ ...base, auth, fetch: f.fetch }).GET("/perks/{perkId}", { params: { path: { perkId: "p1" } } });
    const h = f.seen[0]!.headers;
    assert.equal(h.get("x-application-id"), "t1", name);
    assert.equal(h.get("x-api-version"), String(API_VERSION), name);
    for (const [k, v] of Object.entries(want)) assert.equal(h.get(k), v, `${name}: ${k}`);
  }
});

test("an Idempotency-Key on the operations that take one, the same on each retry", async () => {
  const f = fake(new TypeError("fetch failed"), json(503, { message: "Service Unavailable" }), json(201, { _id: "o1" }));
  const c = createClient({ ...base, fetch: f.fetch });
  await c.POST("/users/{userId}/orders", { params: { path: { userId: "u1" } }, body: { locationId: "l1" } });
  const keys = f.seen.map((r) => r.headers.get("Idempotency-Key"));
  assert.equal(keys.length, 3);
  assert.match(keys[0] ?? "", /^[0-9a-f-]{36}$/);
  assert.deepEqual(new Set(keys).size, 1, `keys ${keys}`);

  // A key the caller gives is kept; a new call gets a new key.
  const g = fake(json(201, { _id: "o2" }), json(201, { _id: "o3" }));
  const d = createClient({ ...base, fetch: g.fetch });
  await d.POST("/users/{userId}/orders", { params: { path: { userId: "u1" }, header: { "Idempotency-Key": "mine" } }, body: {} });
  await d.POST("/users/{userId}/orders", { params: { path: { userId: "u1" } }, body: {} });
  assert.equal(g.seen[0]!.headers.get("Idempotency-Key"), "mine");
  assert.notEqual(g.seen[1]!.headers.get("Idempotency-Key"), "mine");

  // An operation without the header parameter gets none.
  const h = fake(json(201, { _id: "p1" }));
  await createClient({ ...base, fetch: h.fetch }).POST("/perks", { body: { title: "t", template: "STAMP_CARD" } });
  assert.equal(h.seen[0]!.headers.get("Idempotency-Key"), null);
});

test("what is retried", async () => {
  const cases: { name: string; replies: Reply[]; call: (c: ReturnType<typeof createClient>) => Promise<unknown>; attempts: number; fails?: RegExp }[] = [
    {
      name: "429 with Retry-After, any call",
      replies: [json(429, { message: "Too Many Requests" }, { "Retry-After": "0" }), json(201, { _id: "p" })],
      call: (c) => c.POST("/perks", { body: { title: "Coffee card", template: "STAMP_CARD" } }),
      attempts: 2,
    },
    {
      name: "network error, GET",
      replies: [new TypeError("fetch failed"), json(200, { _id: "p" })],
      call: (c) => c.GET("/perks/{perkId}", { params: { path: { perkId: "p" } } }),
      attempts: 2,
    },
    {
      name: "network error, POST without a key: not retried",
      replies: [new TypeError("fetch failed")],
      call: (c) => c.POST("/perks", { body: { title: "Coffee card", template: "STAMP_CARD" } }),
      attempts: 1,
      fails: /fetch failed/,
    },
    {
      name: "409 IDEMPOTENCY_IN_PROGRESS with a key",
      replies: [json(409, { code: "IDEMPOTENCY_IN_PROGRESS", message: "in progress" }, { "Retry-After": "0" }), json(201, { _id: "t" })],
      call: (c) => c.POST("/transactions", { body: { userId: "u", shortCode: "s", totalPrice: 1, paymentType: "APP" } }),
      attempts: 2,
    },
    {
      name: "422: not retried",
      replies: [json(422, { code: "VALIDATION_FAILED", message: "title: is required" })],
      call: (c) => c.POST("/perks", { body: { title: "Coffee card", template: "STAMP_CARD" } }),
      attempts: 1,
      fails: /title: is required/,
    },
    {
      name: "Retry-After beyond the cap: not waited for",
      replies: [json(429, { code: "TOO_MANY_ATTEMPTS", message: "slow down" }, { "Retry-After": "3600" })],
      call: (c) => c.GET("/users/login"),
      attempts: 1,
      fails: /slow down/,
    },
    {
      name: "gives up after maxRetries",
      replies: [json(503, {}), json(503, {}), json(503, {}), json(503, { message: "still down" })],
      call: (c) => c.GET("/perks/{perkId}", { params: { path: { perkId: "p" } } }),
      attempts: 4,
      fails: /still down/,
    },
  ];
  for (const tc of cases) {
    const f = fake(...tc.replies);
    const p = tc.call(createClient({ ...base, fetch: f.fetch }));
    if (tc.fails) await assert.rejects(p, tc.fails, tc.name);
    else await p;
    assert.equal(f.seen.length, tc.attempts, tc.name);
  }
});

test("errors are ApiError", async () => {
  const f = fake(
    json(404, { code: "NOT_FOUND", message: "no such perk" }, { "x-request-id": "r-1" }),
    json(429, { message: "Too Many Requests" }, { "Retry-After": "99" }),
  );
  const c = createClient({ ...base, fetch: f.fetch, retry: false });
  await assert.rejects(c.GET("/perks/{perkId}", { params: { path: { perkId: "p" } } }), (err: unknown) => {
    assert.ok(err instanceof ApiError);
    assert.deepEqual([err.status, err.code, err.message, err.requestId], [404, "NOT_FOUND", "no such perk", "r-1"]);
    return true;
  });
  await assert.rejects(c.GET("/perks/{perkId}", { params: { path: { perkId: "p" } } }), (err: unknown) => {
    assert.ok(err instanceof ApiError);
    assert.deepEqual([err.status, err.code, err.retryAfter, err.requestId], [429, "HTTP_429", 99, undefined]);
    return true;
  });
});

test("paging by key and by page number", async () => {
  const f = fake(
    json(200, { items: [{ _id: "a" }, { _id: "b" }], page: { limit: 2, count: 2, nextKey: "k2" } }),
    json(200, { items: [{ _id: "c" }], page: { limit: 2, count: 1, startKey: "k2" } }),
  );
  const c = createClient({ ...base, fetch: f.fetch });
  const ids: string[] = [];
  for await (const p of c.list("/perks", { params: { query: { limit: 2 } } })) ids.push(p._id);
  assert.deepEqual(ids, ["a", "b", "c"]);
  assert.deepEqual(
    f.seen.map((r) => new URL(r.url).search),
    ["?limit=2", "?limit=2&startKey=k2"],
  );

  const g = fake(json(200, { checkins: [{ _id: "1" }, { _id: "2" }], summary: {} }), json(200, { checkins: [], summary: {} }));
  const d = createClient({ ...base, fetch: g.fetch });
  const n: string[] = [];
  for await (const ch of d.list("/users/{userId}/checkins", { params: { path: { userId: "u" }, query: { per_page: 2 } } })) n.push(ch._id);
  assert.deepEqual(n, ["1", "2"]);
  assert.deepEqual(
    g.seen.map((r) => new URL(r.url).search),
    ["?per_page=2", "?per_page=2&page=2"],
  );
});
