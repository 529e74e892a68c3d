import { createHmac, randomBytes } from "node:crypto"
import { expect } from "vitest"
import { group, scenario } from "../Scenario.js"
import { expectError, expectOk } from "../Shapes.js"
import type { HostedContext } from "./HostControl.js"

/**
 * Tokens signed with the host's own key but expired or with claims that are not for this API:
 * only a test that knows `JWT_SECRET` can make them. A correctly re-signed token is accepted first,
 * so each refusal is about the one thing changed.
 */

const encode = (value: unknown) => Buffer.from(JSON.stringify(value)).toString("base64url")

export const signHs256 = (payload: Record<string, unknown>, secret: string): string => {
  const head = `${encode({ alg: "HS256", typ: "JWT" })}.${encode(payload)}`
  return `${head}.${createHmac("sha256", Buffer.from(secret, "utf8")).update(head).digest("base64url")}`
}

const payloadOf = (token: string): Record<string, unknown> =>
  JSON.parse(Buffer.from(token.split(".")[1] ?? "", "base64url").toString("utf8")) as Record<string, unknown>

export const forgedTokens = group<HostedContext>("tokens signed with the host's key", [
  scenario(
    "a re-signed copy of a real token works; expired, foreign-audience, foreign-issuer or incomplete ones do not",
    async ({ world, host }) => {
      const real = payloadOf(world.token("taker"))
      const now = Math.floor(Date.now() / 1000)
      const resign = (
        changes: Record<string, unknown>,
        drop: ReadonlyArray<string> = [],
        secret = host.jwtSecret
      ) => {
        const payload: Record<string, unknown> = {
          ...real,
          jti: randomBytes(16).toString("base64url"),
          ...changes
        }
        for (const claim of drop) delete payload[claim]
        return signHs256(payload, secret)
      }
      const call = (token: string) => world.api.get("/v1/rfq", { token, query: { limit: 1 } })

      expectOk(await call(resign({ iat: now, exp: now + 60 })), "RfqPage")

      const expired = { status: 401, message: "authorisation token expired or not valid" } as const
      expectError(await call(resign({ iat: now - 7200, exp: now - 3600 })), expired)
      expectError(await call(resign({ iat: now - 301, exp: now - 1 })), expired)
      expectError(await call(resign({ iat: now, exp: now + 60 }, [], `${host.jwtSecret}-not-ours`)), expired)

      const claims = { status: 401, message: "invalid token claims" } as const
      expectError(await call(resign({ aud: "someone-else" })), claims)
      expectError(await call(resign({ iss: "someone-else" })), claims)
      expectError(await call(resign({ typ: "refresh" })), claims)
      expectError(await call(resign({ roles: "trader" })), claims)
      expectError(await call(resign({ sub: "not-a-user-id" })), claims)
      for (const missing of ["sub", "jti", "exp", "iat"]) {
        expectError(await call(resign({}, [missing])), claims)
      }
    }
  ),

  scenario(
    "roles travel in the token: a taker token re-signed as a viewer is refused writes",
    async ({ world, host }) => {
      const real = payloadOf(world.token("taker"))
      const viewer = signHs256(
        { ...real, jti: randomBytes(16).toString("base64url"), roles: ["viewer"] },
        host.jwtSecret
      )
      expect((await world.api.get("/v1/exchange/maker", { token: viewer })).status).toBe(200)
      expectError(await world.api.post("/v1/rfq/cancel", { token: viewer, json: { rfqId: 1 } }), {
        status: 403,
        message: "insufficient permissions"
      })
    }
  )
])
