// README, "A first session with curl": sign-up and activation, the user
// read with its session (both token schemes), login with HTTP Basic and
// logout.
import assert from "node:assert/strict";
import { test } from "node:test";
import { ApiError, createClient } from "../dist/index.js";
import { admin, anon, env, password, signUp, skip } from "./env.js";

test("sign-up, activation, login and logout", { skip }, async () => {
  const user = await signUp("Ada");

  for (const scheme of ["Token", "Bearer"] as const) {
    const me = createClient({ baseUrl: env.baseUrl, auth: { session: user.token, scheme } });
    const got = await me.GET("/users/{userId}", { params: { path: { userId: user.id } } });
    assert.equal(got.id, user.id);
    assert.equal(got.state, "ACTIVE");
  }

  // The admin finds the user by credential (UserList: the client sends x-api-version 9).
  const found = await admin().GET("/users", { params: { query: { credentialId: user.email } } });
  assert.deepEqual(
    found.items.map((u) => u.id),
    [user.id],
  );

  const session = await anon().login(user.email, password, "EMAIL");
  assert.equal(session.userId, user.id);
  const me = anon().withAuth({ session: session._id });
  await me.GET("/users/logout", { params: { query: { userId: user.id } } });
  await assert.rejects(
    me.GET("/users/{userId}", { params: { path: { userId: user.id } } }),
    (err: unknown) => err instanceof ApiError && err.status === 401 && err.code === "UNAUTHORIZED" && !!err.requestId,
  );
});

test("errors are ApiError with the code, message and request id", { skip }, async () => {
  await assert.rejects(anon().login("nobody@example.com", "wrong-password-1", "EMAIL"), (err: unknown) => {
    assert.ok(err instanceof ApiError);
    assert.equal(err.status, 401);
    assert.equal(err.code, "UNAUTHORIZED");
    assert.ok(err.message.length > 0);
    assert.match(err.requestId ?? "", /.+/);
    return true;
  });
  await assert.rejects(
    admin().GET("/users/{userId}", { params: { path: { userId: "no-such-user" } } }),
    (err: unknown) => err instanceof ApiError && err.status === 404 && err.code === "NOT_FOUND",
  );
});
