// README, "A first session with curl": a location and a check-in, then
// loyalty: a perk, a grant, a redemption and its refund, the user's awards
// listed page by page.
import assert from "node:assert/strict";
import { test } from "node:test";
import { ApiError } from "../dist/index.js";
import { admin, anon, checkedIn, signUp, skip } from "./env.js";

test("a check-in", { skip }, async () => {
  const user = await signUp("Chris");
  const locationId = await checkedIn(user, "Soho Cafe");
  const near = await anon().GET("/locations", { params: { query: { lat: 51.5, long: -0.12 } } });
  assert.ok(near.items.some((l) => l._id === locationId));
  const here = await admin().GET("/locations/{locationId}/checkins", { params: { path: { locationId } } });
  assert.deepEqual(
    here.checkins.map((c) => c.userId),
    [user.id],
  );
});

test("a perk, a grant, a redemption and a refund", { skip }, async () => {
  const a = admin();
  const user = await signUp("Grace");
  const userId = user.id;
  const perk = await a.POST("/perks", {
    body: { title: "Coffee card", template: "STAMP_CARD", points: { initial: 0, max: 10 }, visualisation: { titleText: "Coffee card" } },
  });
  const award = await a.POST("/pointperks/{perkId}/awards", { params: { path: { perkId: perk._id } }, body: { userId, points: 8 } });
  assert.equal(award._id, `${userId}-${perk._id}`);
  assert.equal(award.points?.available, 8);

  const awardId = award._id;
  const redeemed = await a.POST("/users/{userId}/pointawards/{awardId}/redeem", {
    params: { path: { userId, awardId } },
    body: { valueToRedeem: 5 },
  });
  assert.equal(redeemed.points?.available, 3);
  await assert.rejects(
    a.POST("/users/{userId}/pointawards/{awardId}/redeem", { params: { path: { userId, awardId } }, body: { valueToRedeem: 5 } }),
    (err: unknown) => err instanceof ApiError && err.status === 422 && err.code === "INSUFFICIENT_POINTS",
  );
  const refunded = await a.POST("/users/{userId}/pointawards/{awardId}/refund", {
    params: { path: { userId, awardId } },
    body: { value: 5 },
  });
  assert.equal(refunded.points?.available, 8);

  // The points ledger of the award, through the paging iterator (2 a page).
  const kinds: string[] = [];
  for await (const entry of a.list("/users/{userId}/pointawards/{awardId}/ledger", { params: { path: { userId, awardId }, query: { limit: 2 } } })) {
    kinds.push(entry.type);
  }
  assert.deepEqual([...kinds].sort(), ["BURN", "EARN", "REFUND"]);
});
