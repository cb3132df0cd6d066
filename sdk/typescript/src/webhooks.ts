/// <reference types="node" />
/**
 * Verifying the webhooks the platform sends (Standard Webhooks v1), in
 * Node.js: `import { verifyWebhook } from "@loyalty-platform/sdk/webhooks"`.
 * It is a subpath of its own because it needs `node:crypto`, which a
 * browser bundle of the client has no use for.
 *
 * @example
 * // body: the request's exact bytes, read before any JSON parsing.
 * const event = verifyWebhook(process.env.WEBHOOK_SECRET!, req.headers, body);
 */
import { createHmac, timingSafeEqual } from "node:crypto";

/** The body of a webhook the platform sends. */
export interface WebhookEvent<T = unknown> {
  /** The event's id; the `webhook-id` header names the message, the same on every retry, to deduplicate by. */
  id: string;
  type: string;
  /** When the event happened (RFC 3339). */
  timestamp: string;
  tenantId: string;
  userId?: string;
  /** Counts the events of the user (or of the tenant, for events without a user) in the order they happened. */
  sequence: number;
  data: T;
}

/** Why {@link verifyWebhook} refused a webhook. */
export type WebhookVerificationReason = "signature" | "timestamp" | "secret" | "body";

/** Thrown by {@link verifyWebhook}: `reason` says what was wrong. */
export class WebhookVerificationError extends Error {
  override readonly name = "WebhookVerificationError";
  constructor(
    message: string,
    readonly reason: WebhookVerificationReason,
  ) {
    super(message);
  }
}

/** Options of {@link verifyWebhook}; every field has a default. */
export interface VerifyWebhookOptions {
  /** How far `webhook-timestamp` may be from now, either way, in seconds (default 300). */
  toleranceSeconds?: number;
  /** The time to check the timestamp against (default now). */
  now?: Date | number;
}

/** Request headers: a fetch `Headers`, or Node's `req.headers` (any case of the names). */
export type WebhookHeaders = Headers | Record<string, string | string[] | undefined>;

/** The default tolerance of `webhook-timestamp`, in seconds. */
export const DEFAULT_WEBHOOK_TOLERANCE_SECONDS = 300;

/**
 * Checks a webhook the platform sent, as the Standard Webhooks
 * specification (v1) says, and returns its parsed event. `secret` is the
 * endpoint's secret (`whsec_` and base64, as the platform showed it),
 * `body` the request's exact bytes or text. `webhook-timestamp` must be
 * within the tolerance of now, either way, and one of the space-separated
 * `v1,<base64>` signatures of `webhook-signature` (two while the
 * endpoint's secret is being rotated) must be the HMAC-SHA256 of
 * `{webhook-id}.{webhook-timestamp}.{body}` under the secret's key,
 * compared with `timingSafeEqual`. Throws {@link WebhookVerificationError}.
 */
export function verifyWebhook<T = unknown>(
  secret: string,
  headers: WebhookHeaders,
  body: string | Uint8Array,
  opts: VerifyWebhookOptions = {},
): WebhookEvent<T> {
  const encoded = secret.startsWith("whsec_") ? secret.slice("whsec_".length) : secret;
  if (encoded === "" || encoded.length % 4 !== 0 || !/^[A-Za-z0-9+/]+={0,2}$/.test(encoded)) {
    throw new WebhookVerificationError("the webhook secret is not whsec_ followed by standard base64", "secret");
  }
  const key = Buffer.from(encoded, "base64");
  const id = header(headers, "webhook-id");
  const stamp = header(headers, "webhook-timestamp");
  const signatures = header(headers, "webhook-signature");
  if (!id || !stamp || !signatures) {
    throw new WebhookVerificationError("the webhook-id, webhook-timestamp and webhook-signature headers are required", "signature");
  }
  if (!/^\d+$/.test(stamp)) {
    throw new WebhookVerificationError(`webhook-timestamp ${JSON.stringify(stamp)} is not unix seconds`, "timestamp");
  }
  const now = opts.now === undefined ? Date.now() : typeof opts.now === "number" ? opts.now : opts.now.getTime();
  const tolerance = opts.toleranceSeconds ?? DEFAULT_WEBHOOK_TOLERANCE_SECONDS;
  if (Math.abs(now / 1000 - Number(stamp)) > tolerance) {
    throw new WebhookVerificationError(`webhook-timestamp ${stamp} is more than ${tolerance} s from now`, "timestamp");
  }
  const bytes = typeof body === "string" ? Buffer.from(body, "utf8") : body;
  const want = createHmac("sha256", key).update(`${id}.${stamp}.`).update(bytes).digest();
  const matches = signatures.split(" ").some((s) => {
    const comma = s.indexOf(",");
    if (comma < 0 || s.slice(0, comma) !== "v1") return false;
    const got = Buffer.from(s.slice(comma + 1), "base64");
    return got.length === want.length && timingSafeEqual(got, want);
  });
  if (!matches) {
    throw new WebhookVerificationError("no v1 signature of webhook-signature matches", "signature");
  }
  try {
    return JSON.parse(Buffer.from(bytes).toString("utf8")) as WebhookEvent<T>;
  } catch (err) {
    throw new WebhookVerificationError(`the webhook body is not JSON: ${(err as Error).message}`, "body");
  }
}

// header returns a header's value from either form of headers (several
// values joined by a space), or "".
function header(headers: WebhookHeaders, name: string): string {
  if (typeof (headers as Headers).get === "function") return (headers as Headers).get(name) ?? "";
  for (const [k, v] of Object.entries(headers as Record<string, string | string[] | undefined>)) {
    if (k.toLowerCase() === name) return Array.isArray(v) ? v.join(" ") : (v ?? "");
  }
  return "";
}
