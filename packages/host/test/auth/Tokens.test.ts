import { randomBytes } from "node:crypto"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Exit } from "effect"
import { type JWTPayload, SignJWT, UnsecuredJWT } from "jose"
import {
  ACCESS_AUDIENCE,
  type AccessClaims,
  MAX_TOKEN_LENGTH,
  REFRESH_AUDIENCE,
  TOKEN_ISSUER,
  Tokens
} from "../../src/auth/Tokens.js"

const secret = new Uint8Array(randomBytes(32))
const otherSecret = new Uint8Array(randomBytes(32))

/** A fixed clock: every time below is relative to it. */
const now = Date.UTC(2030, 0, 2, 3, 4, 5)
const nowSeconds = Math.floor(now / 1000)

const claims: AccessClaims = {
  userId: 7,
  deskId: 3,
  roles: ["viewer"],
  makerId: "maker-9",
  clientId: "client-7"
}

const notValid = "authorisation token expired or not valid"
const invalidClaims = "invalid token claims"

/** A fresh instance per check, so that a verification is never answered from the cache. */
const fresh = () => new Tokens({ secret })

const rejection = <A, E extends { message: string }>(effect: Effect.Effect<A, E>) =>
  Effect.map(Effect.exit(effect), (exit) =>
    Exit.isFailure(exit) && exit.cause._tag === "Fail" ? exit.cause.error.message : "accepted"
  )

/** A well-formed access payload as we sign it, to be varied by the attacks. */
const accessPayload = (): JWTPayload => ({
  typ: "access",
  sub: "7",
  desk: 3,
  roles: ["viewer"],
  jti: "jti-1",
  iss: TOKEN_ISSUER,
  aud: ACCESS_AUDIENCE,
  iat: nowSeconds,
  exp: nowSeconds + 300
})

const signWith = (payload: JWTPayload, key: Uint8Array = secret, alg = "HS256") =>
  Effect.promise(() => new SignJWT(payload).setProtectedHeader({ alg, typ: "JWT" }).sign(key))

const b64url = (value: unknown) => Buffer.from(JSON.stringify(value)).toString("base64url")

describe("Tokens", () => {
  it.effect("only the token as issued verifies: the same bytes spelled another way are refused", () =>
    Effect.gen(function* () {
      const signed = yield* fresh().signAccess(claims, now, 300)
      const token = signed.token
      assert.strictEqual(yield* rejection(fresh().verifyAccess(token, now)), "accepted")
      const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
      // A 32-byte HMAC is 43 characters: the last one carries two unused bits.
      const last = alphabet.indexOf(token.at(-1)!)
      const [header, payload] = token.split(".")
      for (const altered of [
        `${token.slice(0, -1)}${alphabet[last ^ 1]}`,
        `${token}=`,
        `${header}=.${token.slice(header!.length + 1)}`,
        `${header}.${payload}==.${token.split(".")[2]}`
      ]) {
        assert.notStrictEqual(altered, token)
        assert.strictEqual(yield* rejection(fresh().verifyAccess(altered, now)), notValid, altered)
      }
    })
  )

  it.effect("an access token round-trips its claims, with no cache involved", () =>
    Effect.gen(function* () {
      const signed = yield* new Tokens({ secret }).signAccess(claims, now, 300)
      const verified = yield* fresh().verifyAccess(signed.token, now)
      assert.deepStrictEqual(verified.caller, {
        deskId: 3,
        userId: 7,
        roles: ["viewer"],
        makerId: "maker-9",
        clientId: "client-7",
        tokenExpiresAt: (nowSeconds + 300) * 1000
      })
      assert.strictEqual(verified.jti, signed.jti)
      assert.strictEqual(signed.expiresAt, (nowSeconds + 300) * 1000)
    })
  )

  it.effect("alg none is refused", () =>
    Effect.gen(function* () {
      const unsecured = new UnsecuredJWT(accessPayload()).encode()
      assert.strictEqual(yield* rejection(fresh().verifyAccess(unsecured, now)), notValid)
      // Also with the header spelled by hand and a signature part present.
      const forged = `${b64url({ alg: "none", typ: "JWT" })}.${b64url(accessPayload())}.c2ln`
      assert.strictEqual(yield* rejection(fresh().verifyAccess(forged, now)), notValid)
    })
  )

  it.effect("HS256 under another key is refused", () =>
    Effect.gen(function* () {
      const token = yield* signWith(accessPayload(), otherSecret)
      assert.strictEqual(yield* rejection(fresh().verifyAccess(token, now)), notValid)
    })
  )

  it.effect("another HMAC algorithm under our own key is refused (HS256 only)", () =>
    Effect.gen(function* () {
      const token = yield* signWith(accessPayload(), secret, "HS512")
      assert.strictEqual(yield* rejection(fresh().verifyAccess(token, now)), notValid)
    })
  )

  it.effect("a tampered payload is refused, even one that only upgrades the role", () =>
    Effect.gen(function* () {
      const signed = yield* new Tokens({ secret }).signAccess(claims, now, 300)
      const [header, payload, signature] = signed.token.split(".")
      const upgraded = { ...JSON.parse(Buffer.from(payload!, "base64url").toString()), roles: ["trader"] }
      const tampered = `${header}.${b64url(upgraded)}.${signature}`
      assert.strictEqual(yield* rejection(fresh().verifyAccess(tampered, now)), notValid)
    })
  )

  it.effect("a wrong issuer or audience is refused as invalid claims", () =>
    Effect.gen(function* () {
      const wrongIssuer = yield* signWith({ ...accessPayload(), iss: "someone-else" })
      const wrongAudience = yield* signWith({ ...accessPayload(), aud: "other-api" })
      assert.strictEqual(yield* rejection(fresh().verifyAccess(wrongIssuer, now)), invalidClaims)
      assert.strictEqual(yield* rejection(fresh().verifyAccess(wrongAudience, now)), invalidClaims)
    })
  )

  it.effect("a token is valid until the last millisecond before exp and expired from exp on", () =>
    Effect.gen(function* () {
      const signed = yield* new Tokens({ secret }).signAccess(claims, now, 300)
      const exp = signed.expiresAt
      assert.strictEqual(yield* rejection(fresh().verifyAccess(signed.token, exp - 1)), "accepted")
      assert.strictEqual(yield* rejection(fresh().verifyAccess(signed.token, exp)), notValid)
      assert.strictEqual(yield* rejection(fresh().verifyAccess(signed.token, exp + 1000)), notValid)
    })
  )

  it.effect("a cached token expires at its exp like an uncached one", () =>
    Effect.gen(function* () {
      const tokens = new Tokens({ secret })
      const signed = yield* tokens.signAccess(claims, now, 300)
      assert.strictEqual(
        yield* rejection(tokens.verifyAccess(signed.token, signed.expiresAt - 1)),
        "accepted"
      )
      assert.strictEqual(
        yield* rejection(tokens.verifyAccess(signed.token, signed.expiresAt + 1000)),
        notValid
      )
    })
  )

  it.effect("a refresh token presented as an access token is refused, and the other way round", () =>
    Effect.gen(function* () {
      const tokens = new Tokens({ secret })
      const refresh = yield* tokens.signRefresh(
        { jti: "r1", family: "f1", userId: 7, clientId: "c" },
        now,
        1800
      )
      const access = yield* tokens.signAccess(claims, now, 300)
      assert.strictEqual(yield* rejection(tokens.verifyAccess(refresh.token, now)), invalidClaims)
      assert.strictEqual(yield* rejection(tokens.verifyRefresh(access.token, now)), invalidClaims)
      // Even with the refresh audience forged into an otherwise perfect access payload: typ decides.
      const refreshTyped = yield* signWith({ ...accessPayload(), typ: "refresh" })
      assert.strictEqual(yield* rejection(fresh().verifyAccess(refreshTyped, now)), invalidClaims)
      const verified = yield* tokens.verifyRefresh(refresh.token, now)
      assert.deepStrictEqual(verified, {
        jti: "r1",
        family: "f1",
        userId: 7,
        clientId: "c",
        expiresAt: (nowSeconds + 1800) * 1000
      })
      assert.strictEqual(
        yield* rejection(tokens.verifyRefresh(refresh.token, verified.expiresAt)),
        notValid,
        "refresh tokens expire too"
      )
      assert.notStrictEqual(REFRESH_AUDIENCE, ACCESS_AUDIENCE)
    })
  )

  it.effect("well-signed tokens with missing or malformed claims are refused as invalid claims", () =>
    Effect.gen(function* () {
      const { desk: _desk, ...withoutDesk } = accessPayload()
      const { exp: _exp, ...withoutExp } = accessPayload()
      const { jti: _jti, ...withoutJti } = accessPayload()
      const { sub: _sub, ...withoutSub } = accessPayload()
      const { typ: _typ, ...withoutTyp } = accessPayload()
      const variants: ReadonlyArray<[string, JWTPayload]> = [
        ["no desk", withoutDesk],
        ["no exp", withoutExp],
        ["no jti", withoutJti],
        ["no sub", withoutSub],
        ["no typ", withoutTyp],
        ["desk as text", { ...accessPayload(), desk: "3" }],
        ["desk zero", { ...accessPayload(), desk: 0 }],
        ["sub not a user id", { ...accessPayload(), sub: "alice" }],
        ["unknown role", { ...accessPayload(), roles: ["admin"] }],
        ["roles not an array", { ...accessPayload(), roles: "trader" }],
        ["exp as text", { ...accessPayload(), exp: String(nowSeconds + 300) }],
        ["empty maker id", { ...accessPayload(), mk: "" }],
        ["nbf in the future", { ...accessPayload(), nbf: nowSeconds + 60 }]
      ]
      for (const [name, payload] of variants) {
        const token = yield* signWith(payload)
        assert.strictEqual(yield* rejection(fresh().verifyAccess(token, now)), invalidClaims, name)
      }
    })
  )

  it.effect("strings that are not tokens are refused without throwing", () =>
    Effect.gen(function* () {
      const signed = yield* new Tokens({ secret }).signAccess(claims, now, 300)
      const garbage = [
        "",
        "abc",
        "a.b.c",
        "..",
        signed.token.split(".").slice(0, 2).join("."),
        `${signed.token}.extra`,
        `${b64url({ alg: "HS256" })}.${Buffer.from("not json").toString("base64url")}.sig`,
        `${b64url({ alg: "HS256" })}.${b64url([1, 2])}.sig`,
        "x".repeat(MAX_TOKEN_LENGTH + 1)
      ]
      for (const token of garbage) {
        assert.strictEqual(yield* rejection(fresh().verifyAccess(token, now)), notValid, token.slice(0, 40))
      }
      // A payload that is valid JSON but not an object, correctly signed.
      const arrayPayload = yield* Effect.promise(() =>
        new SignJWT({}).setProtectedHeader({ alg: "HS256" }).sign(secret)
      ).pipe(Effect.map((t) => t.split(".")))
      const notObject = `${arrayPayload[0]}.${b64url("text")}.${arrayPayload[2]}`
      assert.strictEqual(yield* rejection(fresh().verifyAccess(notObject, now)), notValid)
    })
  )

  it.effect("the verified cache stays within its bound, evicting the oldest", () =>
    Effect.gen(function* () {
      const tokens = new Tokens({ secret, verifiedCacheSize: 3 })
      const signed = []
      for (let i = 1; i <= 5; i++) signed.push(yield* tokens.signAccess({ ...claims, userId: i }, now, 300))
      assert.strictEqual(tokens.cachedTokens, 3)
      // The evicted first token still verifies (by jose), and re-enters the cache.
      const first = yield* tokens.verifyAccess(signed[0]!.token, now)
      assert.strictEqual(first.caller.userId, 1)
      assert.strictEqual(tokens.cachedTokens, 3)
    })
  )

  it("refuses a JWT secret shorter than 32 bytes", () => {
    assert.throws(() => new Tokens({ secret: new Uint8Array(31) }))
  })
})
