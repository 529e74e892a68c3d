import { assert, describe, layer } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { authRoutes } from "../../src/auth/AuthRoutes.js"
import { AuthLive } from "../../src/auth/AuthService.js"
import { makeRouter, type RouteRequest } from "../../src/Router.js"
import { databaseTimeout, jwtSecret, pgliteDatabase, seedAccount, testScryptParams } from "./authFixtures.js"

/**
 * The token endpoints past the limit of failed secret checks: the standard 429 body with the
 * login limit's X-RateLimit-* and Retry-After, on both endpoints and every way of sending
 * credentials, sharing one count per address; another address is not held back.
 */

const router = makeRouter(authRoutes)
const LIMIT = 3

const post = (path: string, body: string, from: string, headers: Record<string, string> = {}) =>
  Effect.suspend(() => {
    const match = router.match("POST", path)
    if (match._tag !== "Found") return Effect.die(`no route for ${path}`)
    const request: RouteRequest = {
      method: "POST",
      path,
      query: "",
      headers,
      params: match.params,
      body: new TextEncoder().encode(body),
      remoteAddress: from
    }
    return match.route.handler(request)
  })

const json = (clientId: string, clientSecret: string) => JSON.stringify({ clientId, clientSecret })
const form = (clientId: string, clientSecret: string) =>
  new URLSearchParams({
    grant_type: "client_credentials",
    client_id: clientId,
    client_secret: clientSecret
  }).toString()
const basic = (id: string, secret: string) => ({
  authorization: `Basic ${Buffer.from(`${id}:${secret}`).toString("base64")}`,
  "content-type": "application/x-www-form-urlencoded"
})

const testLayer = Layer.provideMerge(
  AuthLive({
    jwtSecret,
    scryptParams: testScryptParams,
    loginThrottle: { perAddress: LIMIT, perClient: 100 }
  }),
  pgliteDatabase
)

describe("token endpoints past the limit of failed secret checks", () => {
  layer(testLayer, { timeout: databaseTimeout })((it) => {
    it.effect(
      "429 with the standard body and the login limit's headers, on both endpoints, shared per address",
      () =>
        Effect.gen(function* () {
          const account = yield* seedAccount()
          const guesser = "198.51.100.20"
          const failures = [
            yield* post("/v1/auth", json(account.clientId, "a"), guesser),
            yield* post("/oauth/token", form(account.clientId, "b"), guesser, {
              "content-type": "application/x-www-form-urlencoded"
            }),
            yield* post("/oauth/token", "grant_type=client_credentials", guesser, basic("nobody", "c"))
          ]
          assert.deepStrictEqual(
            failures.map((r) => r.status),
            [401, 401, 401]
          )
          const refusals = [
            yield* post("/v1/auth", json(account.clientId, account.clientSecret), guesser),
            yield* post("/oauth/token", form(account.clientId, "d"), guesser, {
              "content-type": "application/x-www-form-urlencoded"
            }),
            yield* post(
              "/oauth/token",
              "grant_type=client_credentials",
              guesser,
              basic(account.clientId, "e")
            )
          ]
          for (const refused of refusals) {
            assert.strictEqual(refused.status, 429)
            assert.deepStrictEqual(refused.body, { code: 429, message: "rate limit exceeded" })
            // The test clock stands at 0: the window ends at 60 s.
            assert.deepStrictEqual(refused.headers, {
              "cache-control": "no-store",
              pragma: "no-cache",
              "X-RateLimit-Limit": String(LIMIT),
              "X-RateLimit-Remaining": "0",
              "X-RateLimit-Reset": "60",
              "Retry-After": "60"
            })
          }
          const elsewhere = yield* post(
            "/v1/auth",
            json(account.clientId, account.clientSecret),
            "198.51.100.21"
          )
          assert.strictEqual(elsewhere.status, 200)
        })
    )
  })
})
