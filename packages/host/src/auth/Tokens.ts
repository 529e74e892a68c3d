import { Buffer } from "node:buffer"
import { createSecretKey, type KeyObject, randomBytes } from "node:crypto"
import { type ApiError, apiError, type Caller } from "@rfq/engine"
import { Effect, Either, Schema } from "effect"
import { errors, type JWTPayload, jwtVerify, SignJWT } from "jose"
import { parseBearerToken } from "./BearerToken.js"
import { BoundedCache } from "./BoundedCache.js"
import { HeaderMemo } from "./HeaderMemo.js"

/**
 * Access and refresh tokens: HS256 JWTs under the host's `JWT_SECRET`.
 *
 * Verification accepts only HS256 (so `alg: none` and algorithm confusion are refused before any
 * claim is read), checks issuer, audience and expiry with no clock tolerance, and then decodes the
 * claims with a schema. Failures map to the spec's two messages:
 * - not a token we signed, or expired: `authorisation token expired or not valid`;
 * - signed by us but its claims are missing, malformed or meant for something else (wrong issuer
 *   or audience, a refresh token where an access token belongs): `invalid token claims`.
 *
 * Over 300 lines on purpose: signing, verification and the verified-token cache share one claim
 * schema and must change together.
 */

export const TOKEN_ISSUER = "rfq-service"
/** Access tokens are for the API. */
export const ACCESS_AUDIENCE = "rfq-api"
/** Refresh tokens are only ever presented back to the token endpoint. */
export const REFRESH_AUDIENCE = "rfq-token"

export const MIN_JWT_SECRET_BYTES = 32
/** Longer strings are refused without parsing (the same bound as the request schemas). */
export const MAX_TOKEN_LENGTH = 8192

/** The caller an access token proves, with what the session layer needs to know about the token. */
export interface AuthenticatedCaller extends Caller {
  /** The API client the token was issued to. */
  readonly clientId?: string | undefined
  /** When the access token expires, unix milliseconds. */
  readonly tokenExpiresAt: number
  /** The refresh family the token was issued with: revoking the family ends the token. */
  readonly family?: string | undefined
}

/** What goes into an access token. */
export interface AccessClaims {
  readonly userId: number
  readonly deskId: number
  readonly roles: Caller["roles"]
  readonly makerId?: string | undefined
  readonly clientId?: string | undefined
  /** The refresh-token family it was issued with, so that revoking the family cuts it off too. */
  readonly family?: string | undefined
}

export interface VerifiedAccessToken {
  readonly caller: AuthenticatedCaller
  readonly jti: string
  readonly family?: string | undefined
}

export interface RefreshClaims {
  readonly jti: string
  readonly family: string
  readonly userId: number
  readonly clientId: string
}

export interface VerifiedRefreshToken extends RefreshClaims {
  /** Unix milliseconds. */
  readonly expiresAt: number
}

export interface SignedToken {
  readonly token: string
  readonly jti: string
  /** Unix milliseconds. */
  readonly expiresAt: number
}

const UserIdText = Schema.String.pipe(Schema.pattern(/^[1-9][0-9]{0,15}$/))
const Id = Schema.String.pipe(Schema.minLength(1), Schema.maxLength(256))
const PositiveInt = Schema.Int.pipe(Schema.positive())
const Role = Schema.Literal("trader", "viewer")

const AccessPayload = Schema.Struct({
  typ: Schema.Literal("access"),
  sub: UserIdText,
  desk: PositiveInt,
  roles: Schema.Array(Role).pipe(Schema.maxItems(2)),
  jti: Id,
  iat: Schema.Number,
  exp: Schema.Number,
  mk: Schema.optional(Id),
  cid: Schema.optional(Id),
  fam: Schema.optional(Id)
})

const RefreshPayload = Schema.Struct({
  typ: Schema.Literal("refresh"),
  sub: UserIdText,
  jti: Id,
  fam: Id,
  cid: Id,
  iat: Schema.Number,
  exp: Schema.Number
})

const decodeAccessPayload = Schema.decodeUnknownEither(AccessPayload)
const decodeRefreshPayload = Schema.decodeUnknownEither(RefreshPayload)

const requiredClaims = ["iss", "aud", "sub", "jti", "iat", "exp", "typ"]

/** 128 random bits, URL-safe: access-token ids (the engine's `UserAccounts` makes refresh-token ids). */
export const randomId = (): string => randomBytes(16).toString("base64url")

const seconds = (millis: number): number => Math.floor(millis / 1000)

const classify = (error: unknown): Effect.Effect<never, ApiError> => {
  // JWTExpired is not a JWTClaimValidationFailed in jose 6, but check it first all the same.
  if (error instanceof errors.JWTExpired) return Effect.fail(apiError("tokenExpiredOrInvalid"))
  if (error instanceof errors.JWTClaimValidationFailed) return Effect.fail(apiError("invalidTokenClaims"))
  // Bad signature, disallowed algorithm, not a compact JWS, payload not a JSON object.
  if (error instanceof errors.JOSEError) return Effect.fail(apiError("tokenExpiredOrInvalid"))
  return Effect.die(error)
}

/**
 * Whether `token` is three base64url segments each spelled the one way its bytes encode: no
 * padding, no unused low bits set in a last character. jose decodes leniently, so without this the
 * signature `…Q` could also be sent as `…R` (or with `=` appended) and verify: one token, many
 * strings. Only the token as issued verifies.
 */
const isCanonicalCompact = (token: string): boolean => {
  const segments = token.split(".")
  return (
    segments.length === 3 &&
    segments.every(
      (segment) =>
        /^[A-Za-z0-9_-]*$/.test(segment) &&
        Buffer.from(segment, "base64url").toString("base64url") === segment
    )
  )
}

export interface TokensOptions {
  /** The HMAC key (`JWT_SECRET`), at least 32 bytes. */
  readonly secret: Uint8Array
  /** Bound of the verified-access-token cache. */
  readonly verifiedCacheSize?: number | undefined
}

export const DEFAULT_VERIFIED_CACHE_SIZE = 100_000

/**
 * Signs and verifies tokens under one key. Verified access tokens are remembered until they
 * expire (bounded, oldest out first), so a token used on every request is checked by jose once.
 * Only a byte-identical token hits the cache: any tampering is a miss and a full verification.
 */
export class Tokens {
  private readonly key: KeyObject
  private readonly verified: BoundedCache<string, VerifiedAccessToken>
  /** Recent `Authorization` headers, each with the verified token it carries (`cachedAccessOfHeader`). */
  private readonly headers = new HeaderMemo<{
    readonly verified: VerifiedAccessToken
    readonly expiresAt: number
  }>()

  constructor(options: TokensOptions) {
    if (options.secret.length < MIN_JWT_SECRET_BYTES) {
      throw new Error(`the JWT secret must be at least ${MIN_JWT_SECRET_BYTES} bytes`)
    }
    this.key = createSecretKey(Buffer.from(options.secret))
    this.verified = new BoundedCache(options.verifiedCacheSize ?? DEFAULT_VERIFIED_CACHE_SIZE)
  }

  get cachedTokens(): number {
    return this.verified.size
  }

  private sign(
    payload: JWTPayload,
    subject: string,
    audience: string,
    now: number,
    lifetimeSeconds: number,
    jti: string
  ): Effect.Effect<SignedToken> {
    const iat = seconds(now)
    const exp = iat + lifetimeSeconds
    return Effect.promise(() =>
      new SignJWT(payload)
        .setProtectedHeader({ alg: "HS256", typ: "JWT" })
        .setIssuer(TOKEN_ISSUER)
        .setAudience(audience)
        .setSubject(subject)
        .setJti(jti)
        .setIssuedAt(iat)
        .setExpirationTime(exp)
        .sign(this.key)
    ).pipe(Effect.map((token): SignedToken => ({ token, jti, expiresAt: exp * 1000 })))
  }

  /** A new access token; it is also entered into the cache, as its first use is imminent. */
  signAccess(claims: AccessClaims, now: number, lifetimeSeconds: number): Effect.Effect<SignedToken> {
    const payload: JWTPayload = {
      typ: "access",
      desk: claims.deskId,
      roles: [...claims.roles],
      ...(claims.makerId === undefined ? {} : { mk: claims.makerId }),
      ...(claims.clientId === undefined ? {} : { cid: claims.clientId }),
      ...(claims.family === undefined ? {} : { fam: claims.family })
    }
    return Effect.tap(
      this.sign(payload, String(claims.userId), ACCESS_AUDIENCE, now, lifetimeSeconds, randomId()),
      (signed) =>
        this.verified.set(
          signed.token,
          {
            caller: {
              deskId: claims.deskId,
              userId: claims.userId,
              roles: claims.roles,
              makerId: claims.makerId,
              clientId: claims.clientId,
              tokenExpiresAt: signed.expiresAt,
              ...(claims.family === undefined ? {} : { family: claims.family })
            },
            jti: signed.jti,
            family: claims.family
          },
          signed.expiresAt
        )
    )
  }

  /** A new refresh token with the given id (the key of its database row) and family. */
  signRefresh(claims: RefreshClaims, now: number, lifetimeSeconds: number): Effect.Effect<SignedToken> {
    const payload: JWTPayload = { typ: "refresh", fam: claims.family, cid: claims.clientId }
    return this.sign(payload, String(claims.userId), REFRESH_AUDIENCE, now, lifetimeSeconds, claims.jti)
  }

  private verify(token: string, audience: string, now: number) {
    if (token.length === 0 || token.length > MAX_TOKEN_LENGTH || !isCanonicalCompact(token))
      return Effect.fail(apiError("tokenExpiredOrInvalid"))
    return Effect.tryPromise({
      try: () =>
        jwtVerify(token, this.key, {
          algorithms: ["HS256"],
          issuer: TOKEN_ISSUER,
          audience,
          clockTolerance: 0,
          currentDate: new Date(now),
          requiredClaims
        }),
      catch: (error) => error
    }).pipe(
      Effect.map((result) => result.payload),
      Effect.catchAll(classify)
    )
  }

  /** The verification of this exact access token when it is cached and unexpired at `now`. */
  cachedAccess(token: string, now: number): VerifiedAccessToken | undefined {
    return this.verified.get(token, now)
  }

  /**
   * The verified token of an `Authorization` header: found by the header's exact text when it came
   * recently (`HeaderMemo`: no parsing, no hashing of the token), else `cachedAccess` of its bearer
   * token. The memo keeps what the cache answered and until the token's expiry, and is cleared with
   * it; a token the bounded cache has since evicted may still be answered from the memo until then.
   * That is safe because the memo only saves the signature check of a token already verified:
   * revocation and standing are checked on every call, never through these caches.
   */
  cachedAccessOfHeader(header: string, now: number): VerifiedAccessToken | undefined {
    const known = this.headers.get(header)
    if (known !== undefined) {
      if (now < known.expiresAt) return known.verified
      this.headers.delete(header)
    }
    const token = parseBearerToken(header)
    if (Either.isLeft(token)) return undefined
    const verified = this.verified.get(token.right, now)
    if (verified !== undefined)
      this.headers.set(header, { verified, expiresAt: verified.caller.tokenExpiresAt })
    return verified
  }

  /** The caller of an access token, from the cache when this exact token was verified before. */
  verifyAccess(token: string, now: number): Effect.Effect<VerifiedAccessToken, ApiError> {
    return Effect.suspend(() => {
      const cached = this.verified.get(token, now)
      if (cached !== undefined) return Effect.succeed(cached)
      return this.verify(token, ACCESS_AUDIENCE, now).pipe(
        Effect.flatMap((payload) =>
          Either.match(decodeAccessPayload(payload), {
            onLeft: () => Effect.fail(apiError("invalidTokenClaims")),
            onRight: (claims) => {
              const userId = Number(claims.sub)
              if (!Number.isSafeInteger(userId)) return Effect.fail(apiError("invalidTokenClaims"))
              const verified: VerifiedAccessToken = {
                caller: {
                  deskId: claims.desk,
                  userId,
                  roles: [...new Set(claims.roles)],
                  makerId: claims.mk,
                  clientId: claims.cid,
                  tokenExpiresAt: claims.exp * 1000,
                  ...(claims.fam === undefined ? {} : { family: claims.fam })
                },
                jti: claims.jti,
                family: claims.fam
              }
              this.verified.set(token, verified, claims.exp * 1000)
              return Effect.succeed(verified)
            }
          })
        )
      )
    })
  }

  /** The claims of a refresh token (signature, issuer, audience, expiry and shape; not its row). */
  verifyRefresh(token: string, now: number): Effect.Effect<VerifiedRefreshToken, ApiError> {
    return this.verify(token, REFRESH_AUDIENCE, now).pipe(
      Effect.flatMap((payload) =>
        Either.match(decodeRefreshPayload(payload), {
          onLeft: () => Effect.fail(apiError("invalidTokenClaims")),
          onRight: (claims) => {
            const userId = Number(claims.sub)
            return Number.isSafeInteger(userId)
              ? Effect.succeed({
                  jti: claims.jti,
                  family: claims.fam,
                  userId,
                  clientId: claims.cid,
                  expiresAt: claims.exp * 1000
                })
              : Effect.fail(apiError("invalidTokenClaims"))
          }
        })
      )
    )
  }

  /** Forgets every verified token (tests; a key rotation would also call it). */
  clearCache(): void {
    this.verified.clear()
    this.headers.clear()
  }
}
