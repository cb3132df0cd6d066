// README, "Pay at the till": a rule earning a point per unit of the order
// value, the till's view of who is checked in, an order and its payment
// (each with an Idempotency-Key the client made), completion with the
// points earned, a redemption and the payment's refund taking the points
// back, the story in the actions log; then the app balance: a credit and an
// APP payment, and the balance's ledger.
import assert from "node:assert/strict";
import { test } from "node:test";
import { ApiError } from "../dist/index.js";
import { admin, checkedIn, signUp, skip } from "./env.js";

test("pay at the till, then a refund", { skip }, async () => {
  const a = admin();
  const user = await signUp("Till");
  const userId = user.id;
  const locationId = await checkedIn(user, "Till Cafe");
  const perk = await a.POST("/perks", { body: { title: "Points", template: "STAMP_CARD", points: { initial: 0 } } });
  const awardId = `${userId}-${perk._id}`;
  await a.POST("/rules", {
    body: {
      title: "1 point per pound",
      trigger: "ORDER_COMPLETED",
      conditions: [{ path: "context.location._id", operator: "EQ", value: locationId }],
      effects: [{ type: "GRANT_PERK", perkId: perk._id, pointsPerUnit: 1 }],
    },
  });

  // The till lists who is checked in and fetches the user with points.
  const here = await a.GET("/locations/{locationId}/checkins", { params: { path: { locationId } } });
  assert.ok(here.checkins.some((c) => c.userId === userId));
  const seen = await a.GET("/users/{userId}", { params: { path: { userId }, query: { include: ["points"] } } });
  assert.equal(seen.id, userId);

  const code = `T${Date.now().toString(36)}`;
  const order = await a.POST("/users/{userId}/orders", {
    params: { path: { userId } },
    body: { locationId, scenario: "PAYATPOS", shortCode: code, basket: [{ id: "latte", category: "coffee", title: "Latte" }] },
  });
  const payment = {
    orderId: order._id,
    shortCode: `${code}-P1`,
    totalPrice: 24,
    paymentType: "CARD_AT_POS",
    locationId,
  } as const;
  const txn = await a.POST("/users/{userId}/transactions", { params: { path: { userId } }, body: payment });
  // A retry with the same shortCode and body answers the same transaction.
  const again = await a.POST("/users/{userId}/transactions", { params: { path: { userId } }, body: payment });
  assert.equal(again._id, txn._id);

  const done = await a.PUT("/orders/{orderId}", { params: { path: { orderId: order._id } }, body: { state: "COMPLETED" } });
  assert.equal(done.state, "COMPLETED");
  assert.deepEqual(done.pointsEarned, { [awardId]: 24 });

  // The user spends 4; the refund takes back what is left of the 24.
  await a.POST("/users/{userId}/pointawards/{awardId}/redeem", { params: { path: { userId, awardId } }, body: { valueToRedeem: 4 } });
  // GET /transactions?shortCode= answers the one transaction (a metadata search answers a page).
  const found = await a.GET("/transactions", { params: { query: { shortCode: payment.shortCode } } });
  assert.ok("_id" in found && found._id === txn._id, JSON.stringify(found));
  const refund = await a.PUT("/transactions/{transactionId}", { params: { path: { transactionId: txn._id }, query: { refund: true } } });
  assert.equal(refund.refunded, true);
  assert.equal(refund.pointsReversed, 20);
  assert.equal(refund.pointsNotReversed, 4);
  await assert.rejects(
    a.PUT("/transactions/{transactionId}", { params: { path: { transactionId: txn._id }, query: { refund: true } } }),
    (err: unknown) => err instanceof ApiError && err.status === 409 && err.code === "CONFLICT",
  );

  // The story, newest first: every action of the user, page by page.
  const types: string[] = [];
  for await (const action of a.list("/users/{userId}/actions", { params: { path: { userId }, query: { limit: 3 } } })) {
    types.push(action.type);
  }
  for (const t of ["ORDER_COMPLETED", "TRANSACTION_CREATED", "TRANSACTION_REFUNDED"]) {
    assert.ok(types.includes(t), `${t} is not among ${types}`);
  }

  // App balance: an admin credit, then an APP payment spends it.
  await a.POST("/users/{userId}/credits", { params: { path: { userId } }, body: { type: "BALANCE", amount: 10, reason: "goodwill" } });
  await a.POST("/transactions", { body: { userId, shortCode: `${code}-A1`, totalPrice: 3.5, paymentType: "APP" } });
  await assert.rejects(
    a.POST("/transactions", { body: { userId, shortCode: `${code}-A2`, totalPrice: 100, paymentType: "APP" } }),
    (err: unknown) => err instanceof ApiError && err.status === 422 && err.code === "INSUFFICIENT_BALANCE",
  );
  const ledger = [];
  for await (const entry of a.list("/users/{userId}/balance/ledger", { params: { path: { userId } } })) ledger.push(entry);
  assert.deepEqual(
    ledger.map((e) => [e.type, e.amount, e.balanceAfter]),
    [
      ["PAYMENT", "-3.50", "6.50"],
      ["CREDIT", "10.00", "10.00"],
    ],
  );
});
