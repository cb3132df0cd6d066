// The running stack the scenario tests call, from the environment (the Go
// test localstack TestSDKs starts one and sets these), and helpers the
// scenarios share.
import { createClient, type LoyaltyClient } from "../dist/index.js";

export const env = {
  baseUrl: process.env["LOYALTY_BASE_URL"] ?? "",
  tenant: process.env["LOYALTY_TENANT"] ?? "",
  serviceToken: process.env["LOYALTY_SERVICE_TOKEN"] ?? "",
};

/** skip is the reason to skip the scenarios, or false when a stack is named. */
export const skip: string | false =
  env.baseUrl && env.tenant && env.serviceToken ? false : "set LOYALTY_BASE_URL, LOYALTY_TENANT and LOYALTY_SERVICE_TOKEN to a running stack (make run)";

/** anon is a client of the tenant without credentials. */
export function anon(): LoyaltyClient {
  return createClient({ baseUrl: env.baseUrl, tenant: env.tenant });
}

/** admin is a client of the tenant with its service key. */
export function admin(): LoyaltyClient {
  return createClient({ baseUrl: env.baseUrl, tenant: env.tenant, auth: { serviceKey: env.serviceToken } });
}

/** password is a password every scenario user signs up with. */
export const password = "correct-horse-9";

/** uniqueEmail is an e-mail address no other run uses. */
export function uniqueEmail(name: string): string {
  return `${name}-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 8)}@example.com`;
}

/**
 * signUp registers a user (POST /users, PENDING), reads the activation
 * code as the tenant's admin (tokens.activation of GET /users/{userId}, as
 * README's first session does) and activates it: the user's id, e-mail and
 * session token.
 */
export async function signUp(first: string): Promise<{ id: string; email: string; token: string }> {
  const email = uniqueEmail(first.toLowerCase());
  const user = await anon().POST("/users", {
    body: { firstName: first, lastName: "Tester", credentials: [{ provider: "EMAIL", id: email }], password },
  });
  const full = await admin().GET("/users/{userId}", { params: { path: { userId: user.id } } });
  const code = full.tokens?.activation;
  if (!code) throw new Error(`user ${user.id} has no activation code`);
  const session = await anon().POST("/users/activate", { body: { id: email, token: code } });
  if (!("_id" in session)) throw new Error(`activation of ${user.id} answered ${JSON.stringify(session)}`);
  return { id: user.id, email, token: session._id };
}

/** JPEG is a small real JPEG image (8x8 pixels), a profile photo. */
export const JPEG = Uint8Array.from(
  atob(
    "/9j/2wCEABALDA4MChAODQ4SERATGCgaGBYWGDEjJR0oOjM9PDkzODdASFxOQERXRTc4UG1RV19iZ2hnPk1xeXBkeFxlZ2MBERISGBUYLxoaL2NCOEJjY2NjY2NjY2NjY2NjY2NjY2NjY2NjY2NjY2NjY2NjY2NjY2NjY2NjY2NjY2NjY2NjY//AABEIAAgACAMBIgACEQEDEQH/xAGiAAABBQEBAQEBAQAAAAAAAAAAAQIDBAUGBwgJCgsQAAIBAwMCBAMFBQQEAAABfQECAwAEEQUSITFBBhNRYQcicRQygZGhCCNCscEVUtHwJDNicoIJChYXGBkaJSYnKCkqNDU2Nzg5OkNERUZHSElKU1RVVldYWVpjZGVmZ2hpanN0dXZ3eHl6g4SFhoeIiYqSk5SVlpeYmZqio6Slpqeoqaqys7S1tre4ubrCw8TFxsfIycrS09TV1tfY2drh4uPk5ebn6Onq8fLz9PX29/j5+gEAAwEBAQEBAQEBAQAAAAAAAAECAwQFBgcICQoLEQACAQIEBAMEBwUEBAABAncAAQIDEQQFITEGEkFRB2FxEyIygQgUQpGhscEJIzNS8BVictEKFiQ04SXxFxgZGiYnKCkqNTY3ODk6Q0RFRkdISUpTVFVWV1hZWmNkZWZnaGlqc3R1dnd4eXqCg4SFhoeIiYqSk5SVlpeYmZqio6Slpqeoqaqys7S1tre4ubrCw8TFxsfIycrS09TV1tfY2dri4+Tl5ufo6ery8/T19vf4+fr/2gAMAwEAAhEDEQA/AOG/4+v+u/8A6M/+y/n9ep9hu/8An1n/AO/ZosP+P+2/66r/ADFdnXJWrOi0kjhxGIdBpJH/2Q==",
  ),
  (c) => c.charCodeAt(0),
);

/**
 * checkedIn gives the user a profile photo (PUT /users/{userId}/avatar, a
 * JPEG body) and checks them in at a new location offering check-ins: the
 * location's id.
 */
export async function checkedIn(user: { id: string; token: string }, title: string): Promise<string> {
  const a = admin();
  const loc = await a.POST("/locations", { body: { title, geo: [-0.1337, 51.5136], services: { checkins: true } } });
  const me = createClient({ baseUrl: env.baseUrl, auth: { session: user.token } });
  await me.PUT("/users/{userId}/avatar", {
    params: { path: { userId: user.id } },
    body: JPEG as unknown as string,
    bodySerializer: (b: unknown) => b,
    headers: { "Content-Type": "image/jpeg" },
  });
  await me.POST("/users/{userId}/checkins", {
    params: { path: { userId: user.id } },
    body: { locationId: loc._id, type: "MANUAL", trigger: "CODE" },
  });
  return loc._id;
}

/** poll calls get until done says the answer is final, every 100 ms, for at most ms. */
export async function poll<T>(get: () => Promise<T>, done: (v: T) => boolean, ms = 30_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await get();
    if (done(v) || Date.now() > end) return v;
    await new Promise((r) => setTimeout(r, 100));
  }
}
