import { generateKeyPairSync, randomBytes } from "node:crypto"
import { SignJWT } from "jose"
import { TEST_JWT_SECRET } from "./HostProcess.js"
import { call, oauthRefresh, oauthToken, tokenFor } from "./Http.js"

/**
 * Tokens against RFC 8725 (JWT best current practices): each forged or misused token is presented
 * and must get its documented answer (docs/auth.md). "Forged accepted" counts any forged token
 * that reached a 200. The host runs with the known `TEST_JWT_SECRET`, so tokens that are signed
 * correctly but carry wrong claims can be built here.
 */
export interface TokenCase {
  readonly name: string
  readonly expected: string
  readonly actual: string
  readonly ok: boolean
  readonly forgedAccepted: boolean
}

const TOKEN_INVALID = "401 authorisation token expired or not valid"
const CLAIMS_INVALID = "401 invalid token claims"

const b64 = (value: unknown) => Buffer.from(JSON.stringify(value)).toString("base64url")
const key = new TextEncoder().encode(TEST_JWT_SECRET)
const nowSeconds = () => Math.floor(Date.now() / 1000)

const claimsOf = (token: string): Record<string, unknown> =>
  JSON.parse(Buffer.from(token.split(".")[1]!, "base64url").toString("utf8")) as Record<string, unknown>

const sign = (claims: Record<string, unknown>, secret: Uint8Array = key, alg = "HS256") =>
  new SignJWT(claims).setProtectedHeader({ alg, typ: "JWT" }).sign(secret)

const outcome = async (base: string, token: string) => {
  const a = await call(base, "GET", "/v1/rfq?limit=1", { token })
  return {
    text: `${a.status} ${(a.body as { message?: string } | undefined)?.message ?? ""}`.trim(),
    status: a.status
  }
}

export const runTokenAttacks = async (base: string): Promise<ReadonlyArray<TokenCase>> => {
  const cases: Array<TokenCase> = []
  const genuine = await tokenFor(base, "demo-taker")
  const claims = claimsOf(genuine)
  const check = async (name: string, token: string, expected: string, forged = true) => {
    const { text, status } = await outcome(base, token)
    cases.push({
      name,
      expected,
      actual: text,
      ok: text === expected,
      forgedAccepted: forged && status === 200
    })
  }

  await check("genuine access token (control)", genuine, "200", false)
  await check("alg: none, no signature", `${b64({ alg: "none", typ: "JWT" })}.${b64(claims)}.`, TOKEN_INVALID)
  await check(
    "alg: none, genuine signature kept",
    `${b64({ alg: "none", typ: "JWT" })}.${b64(claims)}.${genuine.split(".")[2]}`,
    TOKEN_INVALID
  )
  const { publicKey } = generateKeyPairSync("rsa", { modulusLength: 2048 })
  const pem = new TextEncoder().encode(publicKey.export({ type: "spki", format: "pem" }).toString())
  await check("HS256 signed with a public key (algorithm confusion)", await sign(claims, pem), TOKEN_INVALID)
  await check(
    "HS256 signed with another key",
    await sign(claims, new Uint8Array(randomBytes(32))),
    TOKEN_INVALID
  )
  await check("HS512 signed with the service's key", await sign(claims, key, "HS512"), TOKEN_INVALID)
  await check(
    "payload changed (desk 2), signature kept",
    `${genuine.split(".")[0]}.${b64({ ...claims, desk: 2 })}.${genuine.split(".")[2]}`,
    TOKEN_INVALID
  )
  await check("wrong issuer", await sign({ ...claims, iss: "someone-else" }), CLAIMS_INVALID)
  await check("wrong audience", await sign({ ...claims, aud: "rfq-token" }), CLAIMS_INVALID)
  await check(
    "no audience",
    await sign(Object.fromEntries(Object.entries(claims).filter(([k]) => k !== "aud"))),
    CLAIMS_INVALID
  )
  await check(
    "expired by one second",
    await sign({ ...claims, iat: nowSeconds() - 60, exp: nowSeconds() - 1 }),
    TOKEN_INVALID
  )
  await check("not yet valid (nbf + 60 s)", await sign({ ...claims, nbf: nowSeconds() + 60 }), CLAIMS_INVALID)
  await check("empty token", "", "401 missing bearer token")
  await check("8 KiB of garbage", "a".repeat(9000), TOKEN_INVALID)

  // Refresh tokens: never an access token; one-time; a replay revokes the family.
  const pair = await oauthToken(base, "demo-taker")
  await check("refresh token used as an access token", pair.refresh_token, CLAIMS_INVALID)
  const first = await oauthRefresh(base, "demo-taker", pair.refresh_token)
  cases.push(refreshCase("refresh once", first, "200"))
  const replay = await oauthRefresh(base, "demo-taker", pair.refresh_token)
  cases.push(refreshCase("replayed refresh token", replay, TOKEN_INVALID, true))
  const successor = (first.body as { refresh_token?: string } | undefined)?.refresh_token ?? ""
  const afterReplay = await oauthRefresh(base, "demo-taker", successor)
  cases.push(refreshCase("successor after a replay (family revoked)", afterReplay, TOKEN_INVALID, true))
  const otherClient = await oauthToken(base, "demo-maker-1")
  const stolen = await oauthRefresh(base, "demo-taker", otherClient.refresh_token)
  cases.push(refreshCase("another client's refresh token", stolen, TOKEN_INVALID, true))

  // Ten concurrent refreshes of one token: exactly one wins, and the replays revoke the family,
  // the winner's successor included (docs/auth.md).
  const fresh = await oauthToken(base, "demo-taker")
  const racers = await Promise.all(
    Array.from({ length: 10 }, () => oauthRefresh(base, "demo-taker", fresh.refresh_token))
  )
  const winners = racers.filter((a) => a.status === 200)
  const losersOk = racers
    .filter((a) => a.status !== 200)
    .every((a) => `${a.status} ${(a.body as { message?: string }).message}` === TOKEN_INVALID)
  cases.push({
    name: "ten concurrent refreshes",
    expected: "1 × 200, 9 × 401 authorisation token expired or not valid",
    actual: `${winners.length} × 200, ${racers.length - winners.length} × non-200${losersOk ? "" : " (some with another answer)"}`,
    ok: winners.length === 1 && losersOk,
    forgedAccepted: winners.length > 1
  })
  const winnerSuccessor = (winners[0]?.body as { refresh_token?: string } | undefined)?.refresh_token ?? ""
  cases.push(
    refreshCase(
      "winner's successor after the race (family revoked)",
      await oauthRefresh(base, "demo-taker", winnerSuccessor),
      TOKEN_INVALID,
      true
    )
  )
  return cases
}

const refreshCase = (
  name: string,
  a: { status: number; body: unknown },
  expected: string,
  forged = false
): TokenCase => {
  const text = `${a.status} ${(a.body as { message?: string } | undefined)?.message ?? ""}`.trim()
  return {
    name,
    expected,
    actual: text,
    ok: a.status === 200 ? expected === "200" : text === expected,
    forgedAccepted: forged && a.status === 200
  }
}
