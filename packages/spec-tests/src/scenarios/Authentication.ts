import { expect } from "vitest"
import type { ApiClient } from "../ApiClient.js"
import { group, scenario } from "../Scenario.js"
import { expectError, expectOk } from "../Shapes.js"
import { demoClients, secretOf, type World } from "../World.js"

/** The spec's Authentication section and its error table, over REST and the token endpoints. */

const form = (fields: Record<string, string>) => ({
  raw: new URLSearchParams(fields).toString(),
  headers: { "content-type": "application/x-www-form-urlencoded" }
})

interface OAuthTokens {
  access_token: string
  refresh_token: string
  expires_in: number
  refresh_expires_in: number
  token_type: string
}

export const oauthToken = async (api: ApiClient, clientId: string): Promise<OAuthTokens> =>
  expectOk<OAuthTokens>(
    await api.post(
      "/oauth/token",
      form({ grant_type: "client_credentials", client_id: clientId, client_secret: secretOf(clientId) })
    ),
    "OAuthTokenResponse"
  )

const refresh = (api: ApiClient, clientId: string, refreshToken: string) =>
  api.post(
    "/oauth/token",
    form({
      grant_type: "refresh_token",
      refresh_token: refreshToken,
      client_id: clientId,
      client_secret: secretOf(clientId)
    })
  )

/** A read every authenticated caller may make. */
const readMakers = (w: World, authorization?: string) =>
  w.api.get("/v1/exchange/maker", authorization === undefined ? {} : { headers: { authorization } })

const base64url = (value: unknown) => Buffer.from(JSON.stringify(value)).toString("base64url")

export const authentication = group("authentication", [
  scenario(
    "POST /oauth/token issues 300 s access and 1800 s refresh tokens that work as bearer tokens",
    async (w) => {
      const tokens = await oauthToken(w.api, demoClients.taker)
      expect(tokens).toMatchObject({ token_type: "Bearer", expires_in: 300, refresh_expires_in: 1800 })
      expectOk(await readMakers(w, `Bearer ${tokens.access_token}`), "MakerList")
    }
  ),

  scenario("POST /v1/auth issues a 3600 s access token without a refresh token", async (w) => {
    const response = await w.api.post("/v1/auth", {
      json: { clientId: demoClients.maker1, clientSecret: secretOf(demoClients.maker1) }
    })
    const body = expectOk<{ access_token: string }>(response, "AuthResponse")
    expect(body).toMatchObject({ token_type: "Bearer", expires_in: 3600 })
    expect(body).not.toHaveProperty("refresh_token")
    expectOk(await readMakers(w, `Bearer ${body.access_token}`), "MakerList")
  }),

  scenario(
    "a refresh rotates both tokens; replaying a used refresh token is refused and revokes its family",
    async (w) => {
      const first = await oauthToken(w.api, demoClients.maker2)
      const second = expectOk<OAuthTokens>(
        await refresh(w.api, demoClients.maker2, first.refresh_token),
        "OAuthTokenResponse"
      )
      expect(second).toMatchObject({ expires_in: 300, refresh_expires_in: 1800 })
      expect(second.refresh_token).not.toBe(first.refresh_token)
      expect(second.access_token).not.toBe(first.access_token)
      expectOk(await readMakers(w, `Bearer ${second.access_token}`), "MakerList")

      expectError(await refresh(w.api, demoClients.maker2, first.refresh_token), {
        status: 401,
        message: "authorisation token expired or not valid",
        oauthError: "invalid_grant"
      })
      // The replay revoked the family: the successor is refused too.
      expectError(await refresh(w.api, demoClients.maker2, second.refresh_token), {
        status: 401,
        message: "authorisation token expired or not valid",
        oauthError: "invalid_grant"
      })
    }
  ),

  scenario("a refresh token presented by another client is refused", async (w) => {
    const tokens = await oauthToken(w.api, demoClients.maker3)
    expectError(await refresh(w.api, demoClients.maker1, tokens.refresh_token), {
      status: 401,
      message: "authorisation token expired or not valid",
      oauthError: "invalid_grant"
    })
  }),

  scenario(
    "missing bearer token: no Authorization header, a blank one, or Bearer with nothing after it",
    async (w) => {
      for (const header of [undefined, "", "Bearer", "Bearer "]) {
        expectError(await readMakers(w, header), { status: 401, message: "missing bearer token" })
      }
      expectError(await w.api.post("/v1/rfq/0", { json: {} }), {
        status: 401,
        message: "missing bearer token"
      })
    }
  ),

  scenario("invalid authorization header: another scheme or a malformed bearer value", async (w) => {
    const token = w.token("taker")
    for (const header of [`Basic ${token}`, `Token ${token}`, `Bearer  ${token}`, `Bearer ${token} extra`]) {
      expectError(await readMakers(w, header), { status: 401, message: "invalid authorization header" })
    }
  }),

  scenario("authorisation token expired or not valid: garbage, a forged signature, alg none", async (w) => {
    const [header, payload] = w.token("taker").split(".") as [string, string, string]
    const forged = `${header}.${payload}.${Buffer.from("not the signature").toString("base64url")}`
    const unsigned = `${base64url({ alg: "none", typ: "JWT" })}.${payload}.`
    for (const token of ["not-a-jwt", "a.b.c", forged, unsigned]) {
      expectError(await readMakers(w, `Bearer ${token}`), {
        status: 401,
        message: "authorisation token expired or not valid"
      })
    }
  }),

  scenario("invalid token claims: a refresh token presented as an access token", async (w) => {
    const tokens = await oauthToken(w.api, demoClients.taker)
    expectError(await readMakers(w, `Bearer ${tokens.refresh_token}`), {
      status: 401,
      message: "invalid token claims"
    })
    // And the other way round: an access token is not a refresh token.
    expectError(await refresh(w.api, demoClients.taker, tokens.access_token), {
      status: 401,
      message: "invalid token claims",
      oauthError: "invalid_grant"
    })
  }),

  scenario("invalid client ID: an unknown client or a wrong secret, on both token endpoints", async (w) => {
    for (const [clientId, secret] of [
      ["no-such-client", "whatever"],
      [demoClients.taker, "wrong-secret"]
    ] as const) {
      expectError(
        await w.api.post(
          "/oauth/token",
          form({ grant_type: "client_credentials", client_id: clientId, client_secret: secret })
        ),
        { status: 401, message: "invalid client ID", oauthError: "invalid_client" }
      )
      expectError(await w.api.post("/v1/auth", { json: { clientId, clientSecret: secret } }), {
        status: 401,
        message: "invalid client ID",
        oauthError: "invalid_client"
      })
    }
  }),

  scenario("a malformed token request is a 400", async (w) => {
    expectError(await w.api.post("/oauth/token", form({ client_id: demoClients.taker })), {
      status: 400,
      message: "invalid request",
      oauthError: "invalid_request"
    })
    expectError(
      await w.api.post(
        "/oauth/token",
        form({
          grant_type: "password",
          client_id: demoClients.taker,
          client_secret: secretOf(demoClients.taker)
        })
      ),
      { status: 400, message: "invalid request", oauthError: "unsupported_grant_type" }
    )
    expectError(await w.api.post("/v1/auth", { json: { clientId: demoClients.taker } }), {
      status: 400,
      message: "invalid request",
      oauthError: "invalid_request"
    })
    expectError(
      await w.api.post("/v1/auth", { raw: "{not json", headers: { "content-type": "application/json" } }),
      {
        status: 400,
        message: "invalid request",
        oauthError: "invalid_request"
      }
    )
  }),

  scenario("every /v1 operation needs a token", async (w) => {
    const calls: ReadonlyArray<readonly [string, string]> = [
      ["GET", "/v1/rfq"],
      ["GET", "/v1/rfq/1"],
      ["POST", "/v1/rfq/0"],
      ["DELETE", "/v1/rfq/1"],
      ["POST", "/v1/rfq/cancel"],
      ["GET", "/v1/rfq/1/quote"],
      ["POST", "/v1/rfq/trade"],
      ["GET", "/v1/rfq/quotes"],
      ["POST", "/v1/rfq/quote"],
      ["PUT", "/v1/rfq/quote"],
      ["DELETE", "/v1/rfq/quote"],
      ["POST", "/v1/rfq/quote/cancel-all"],
      ["POST", "/v1/rfq/leg-prices"],
      ["GET", "/v1/exchange/maker"],
      ["GET", "/v1/exchange/instruments"],
      ["GET", "/v1/account/exchange-credentials"],
      ["GET", "/v1/account/exchange-credentials/1"],
      ["POST", "/v1/account/exchange-credentials"],
      ["DELETE", "/v1/account/exchange-credentials/1"],
      ["GET", "/v1/account/otc-counterparty"],
      ["POST", "/v1/block-trade/bulk"]
    ]
    for (const [method, path] of calls) {
      const response = await w.api.request(method, path, method === "GET" ? {} : { json: {} })
      expectError(response, { status: 401, message: "missing bearer token" })
    }
  })
])
