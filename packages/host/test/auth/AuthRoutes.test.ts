import { assert, describe, layer } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { authRoutes } from "../../src/auth/AuthRoutes.js"
import { Auth, AuthLive } from "../../src/auth/AuthService.js"
import { makeRouter, type RouteRequest } from "../../src/Router.js"
import { databaseTimeout, jwtSecret, pgliteDatabase, seedAccount, testScryptParams } from "./authFixtures.js"

const router = makeRouter(authRoutes)

const form = "application/x-www-form-urlencoded"

const post = (path: string, body: string, headers: Record<string, string> = {}) =>
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
      remoteAddress: "127.0.0.1"
    }
    return match.route.handler(request)
  })

const formBody = (fields: Record<string, string>) => new URLSearchParams(fields).toString()

const basic = (id: string, secret: string) =>
  `Basic ${Buffer.from(`${encodeURIComponent(id)}:${encodeURIComponent(secret)}`).toString("base64")}`

const testLayer = Layer.provideMerge(AuthLive({ jwtSecret, scryptParams: testScryptParams }), pgliteDatabase)

describe("token endpoints", () => {
  layer(testLayer, { timeout: databaseTimeout })((it) => {
    it.effect("POST /oauth/token, client credentials: 300 s token, 1800 s refresh token, no caching", () =>
      Effect.gen(function* () {
        const account = yield* seedAccount()
        const response = yield* post(
          "/oauth/token",
          formBody({
            grant_type: "client_credentials",
            client_id: account.clientId,
            client_secret: account.clientSecret
          }),
          { "content-type": form }
        )
        assert.strictEqual(response.status, 200)
        const body = response.body as Record<string, unknown>
        assert.deepStrictEqual(Object.keys(body).sort(), [
          "access_token",
          "expires_in",
          "refresh_expires_in",
          "refresh_token",
          "token_type"
        ])
        assert.deepStrictEqual(
          [body.token_type, body.expires_in, body.refresh_expires_in],
          ["Bearer", 300, 1800]
        )
        assert.strictEqual(response.headers?.["cache-control"], "no-store")
        const caller = yield* Effect.flatMap(Auth, (auth) => auth.authenticate(`Bearer ${body.access_token}`))
        assert.strictEqual(caller.userId, account.userId)
      })
    )

    it.effect("POST /oauth/token, refresh grant: rotates; the old refresh token is then invalid_grant", () =>
      Effect.gen(function* () {
        const account = yield* seedAccount()
        const credentials = { client_id: account.clientId, client_secret: account.clientSecret }
        const first = yield* post(
          "/oauth/token",
          formBody({ grant_type: "client_credentials", ...credentials }),
          {
            "content-type": form
          }
        )
        const refreshToken = (first.body as { refresh_token: string }).refresh_token
        const refresh = formBody({ grant_type: "refresh_token", refresh_token: refreshToken, ...credentials })
        const second = yield* post("/oauth/token", refresh, { "content-type": form })
        assert.strictEqual(second.status, 200)
        assert.notStrictEqual((second.body as { refresh_token: string }).refresh_token, refreshToken)
        const replay = yield* post("/oauth/token", refresh, { "content-type": form })
        assert.deepStrictEqual(
          [replay.status, replay.body],
          [401, { code: 401, message: "authorisation token expired or not valid", error: "invalid_grant" }]
        )
      })
    )

    it.effect(
      "POST /oauth/token takes the client credentials as HTTP Basic too, but not both ways at once",
      () =>
        Effect.gen(function* () {
          const account = yield* seedAccount()
          const viaBasic = yield* post("/oauth/token", formBody({ grant_type: "client_credentials" }), {
            "content-type": form,
            authorization: basic(account.clientId, account.clientSecret)
          })
          assert.strictEqual(viaBasic.status, 200)
          const both = yield* post(
            "/oauth/token",
            formBody({ grant_type: "client_credentials", client_secret: account.clientSecret }),
            { "content-type": form, authorization: basic(account.clientId, account.clientSecret) }
          )
          assert.deepStrictEqual(
            [both.status, (both.body as { error: string }).error],
            [400, "invalid_request"]
          )
          const wrong = yield* post("/oauth/token", formBody({ grant_type: "client_credentials" }), {
            "content-type": form,
            authorization: basic(account.clientId, "nope")
          })
          assert.deepStrictEqual(wrong.body, {
            code: 401,
            message: "invalid client ID",
            error: "invalid_client"
          })
          assert.strictEqual(wrong.headers?.["www-authenticate"], 'Basic realm="rfq-service"')
        })
    )

    it.effect("POST /oauth/token accepts the same fields as JSON", () =>
      Effect.gen(function* () {
        const account = yield* seedAccount()
        const response = yield* post(
          "/oauth/token",
          JSON.stringify({
            grant_type: "client_credentials",
            client_id: account.clientId,
            client_secret: account.clientSecret
          }),
          { "content-type": "application/json; charset=utf-8" }
        )
        assert.strictEqual(response.status, 200)
      })
    )

    it.effect("POST /oauth/token errors: the standard body plus the RFC 6749 error code", () =>
      Effect.gen(function* () {
        const account = yield* seedAccount()
        const creds = { client_id: account.clientId, client_secret: account.clientSecret }
        const cases: ReadonlyArray<[string, string, Record<string, string>, number, string, string]> = [
          [
            "no grant_type",
            formBody(creds),
            { "content-type": form },
            400,
            "invalid request",
            "invalid_request"
          ],
          [
            "unknown grant",
            formBody({ grant_type: "password", ...creds }),
            { "content-type": form },
            400,
            "invalid request",
            "unsupported_grant_type"
          ],
          [
            "refresh grant without a refresh token",
            formBody({ grant_type: "refresh_token", ...creds }),
            { "content-type": form },
            400,
            "invalid request",
            "invalid_request"
          ],
          [
            "a repeated field",
            `${formBody({ grant_type: "client_credentials", ...creds })}&client_id=other`,
            { "content-type": form },
            400,
            "invalid request",
            "invalid_request"
          ],
          [
            "an unsupported content type",
            formBody({ grant_type: "client_credentials", ...creds }),
            { "content-type": "text/plain" },
            400,
            "invalid request",
            "invalid_request"
          ],
          [
            "malformed JSON",
            "{",
            { "content-type": "application/json" },
            400,
            "invalid request",
            "invalid_request"
          ],
          [
            "wrong secret",
            formBody({ grant_type: "client_credentials", client_id: account.clientId, client_secret: "x" }),
            { "content-type": form },
            401,
            "invalid client ID",
            "invalid_client"
          ],
          [
            "a refresh token that is not a token",
            formBody({ grant_type: "refresh_token", refresh_token: "abc", ...creds }),
            { "content-type": form },
            401,
            "authorisation token expired or not valid",
            "invalid_grant"
          ]
        ]
        for (const [name, body, headers, status, message, error] of cases) {
          const response = yield* post("/oauth/token", body, headers)
          const got = response.body as { code: number; message: string; error: string }
          assert.deepStrictEqual(
            [response.status, got.code, got.message, got.error],
            [status, status, message, error],
            name
          )
        }
      })
    )

    it.effect("an inactive account gets 401 account is inactive with unauthorized_client", () =>
      Effect.gen(function* () {
        const account = yield* seedAccount({ userActive: false })
        const response = yield* post(
          "/oauth/token",
          formBody({
            grant_type: "client_credentials",
            client_id: account.clientId,
            client_secret: account.clientSecret
          }),
          { "content-type": form }
        )
        assert.deepStrictEqual(response.body, {
          code: 401,
          message: "account is inactive",
          error: "unauthorized_client"
        })
      })
    )

    it.effect("POST /v1/auth: JSON credentials give a 3600 s token and no refresh token", () =>
      Effect.gen(function* () {
        const account = yield* seedAccount({ roles: ["viewer"] })
        const response = yield* post(
          "/v1/auth",
          JSON.stringify({ clientId: account.clientId, clientSecret: account.clientSecret }),
          { "content-type": "application/json" }
        )
        assert.strictEqual(response.status, 200)
        const body = response.body as Record<string, unknown>
        assert.deepStrictEqual(Object.keys(body).sort(), ["access_token", "expires_in", "token_type"])
        assert.deepStrictEqual([body.token_type, body.expires_in], ["Bearer", 3600])
        const caller = yield* Effect.flatMap(Auth, (auth) => auth.verifyToken(String(body.access_token)))
        assert.deepStrictEqual(caller.roles, ["viewer"])
      })
    )

    it.effect("POST /v1/auth errors", () =>
      Effect.gen(function* () {
        const account = yield* seedAccount()
        const cases: ReadonlyArray<[string, number, string, string]> = [
          ["not json", 400, "invalid request", "invalid_request"],
          ["[]", 400, "invalid request", "invalid_request"],
          [JSON.stringify({ clientId: account.clientId }), 400, "invalid request", "invalid_request"],
          [
            JSON.stringify({ clientId: account.clientId, clientSecret: "x" }),
            401,
            "invalid client ID",
            "invalid_client"
          ]
        ]
        for (const [body, status, message, error] of cases) {
          const response = yield* post("/v1/auth", body, { "content-type": "application/json" })
          const got = response.body as { code: number; message: string; error: string; reason?: unknown }
          assert.deepStrictEqual(
            [response.status, got.code, got.message, got.error],
            [status, status, message, error],
            body
          )
        }
      })
    )
  })
})
