import {
  API_ACCESS_TOKEN_SECONDS,
  type ApiError,
  AuthRequest,
  apiError,
  decodeRequestEither,
  OAUTH_ACCESS_TOKEN_SECONDS,
  OAuthTokenRequest
} from "@rfq/engine"
import { Clock, Effect, Either } from "effect"
import { rateLimitHeaders } from "../RateLimiter.js"
import { type Route, type RouteRequest, type RouteResponse, route } from "../Router.js"
import { Auth, type TokenResponse } from "./AuthService.js"
import { LoginThrottled } from "./LoginThrottle.js"
import {
  mediaType,
  noStoreHeaders,
  oauthErrorOf,
  parseBasicCredentials,
  parseFormBody,
  parseJsonObjectBody,
  tokenErrorResponse
} from "./TokenRequests.js"

/**
 * The two token issuers (contract: both exist, tokens from either work everywhere):
 * - `POST /oauth/token` ({auth_url}): form-encoded (JSON accepted too), grants
 *   `client_credentials` and `refresh_token`; 300 s access tokens and rotating one-time refresh
 *   tokens (1800 s). Client credentials come in the body or as HTTP Basic, not both.
 * - `POST /v1/auth` (quickstart): JSON `{clientId, clientSecret}`; a 3600 s access token and no
 *   refresh token (the quickstart shows none; a client renews by asking again).
 * Neither needs a bearer token. Errors carry the standard body plus the RFC 6749 `error` code.
 */

const supportedGrants = ["client_credentials", "refresh_token"]

const ok = (body: TokenResponse): RouteResponse => ({ status: 200, body, headers: noStoreHeaders })

/**
 * Too many failed secret checks from this address or for this client id: the standard 429 body
 * (as the HTTP rate limiter answers), with the login limit's own `X-RateLimit-*` and `Retry-After`.
 */
const throttled = (error: LoginThrottled, now: number): RouteResponse => ({
  status: 429,
  body: apiError("rateLimitExceeded").toBody(),
  headers: {
    ...noStoreHeaders,
    ...rateLimitHeaders(error.decision),
    "Retry-After": String(Math.max(1, error.decision.reset - Math.floor(now / 1000)))
  }
})

/** The token request's fields, from the form (or JSON) body merged with HTTP Basic credentials. */
const tokenRequestFields = (request: RouteRequest): Either.Either<Record<string, unknown>, ApiError> => {
  const type = mediaType(request.headers["content-type"])
  const body =
    type === "application/json"
      ? parseJsonObjectBody(request.body)
      : type === undefined || type === "application/x-www-form-urlencoded"
        ? parseFormBody(request.body)
        : Either.left(
            apiError(
              "invalidRequest",
              "content-type must be application/x-www-form-urlencoded or application/json"
            )
          )
  return Either.flatMap(body, (fields) =>
    Either.flatMap(parseBasicCredentials(request.headers["authorization"]), (basic) => {
      if (basic === undefined) return Either.right(fields)
      if (fields["client_secret"] !== undefined) {
        return Either.left(apiError("invalidRequest", "client credentials must be sent one way only"))
      }
      if (fields["client_id"] !== undefined && fields["client_id"] !== basic.clientId) {
        return Either.left(apiError("invalidRequest", "client_id differs from the Authorization header"))
      }
      return Either.right({ ...fields, client_id: basic.clientId, client_secret: basic.clientSecret })
    })
  )
}

const oauthToken = (request: RouteRequest): Effect.Effect<RouteResponse, never, Auth> =>
  Effect.gen(function* () {
    const auth = yield* Auth
    const fields = yield* tokenRequestFields(request)
    const grantType = fields["grant_type"]
    if (typeof grantType === "string" && !supportedGrants.includes(grantType)) {
      return tokenErrorResponse(
        apiError("invalidRequest", `grant_type: ${JSON.stringify(grantType)} is not supported`),
        "unsupported_grant_type"
      )
    }
    const grant = yield* decodeRequestEither(OAuthTokenRequest, fields)
    const issued =
      grant.grant_type === "client_credentials"
        ? yield* auth.clientCredentials(
            grant.client_id,
            grant.client_secret,
            OAUTH_ACCESS_TOKEN_SECONDS,
            true,
            request.remoteAddress
          )
        : yield* auth.refresh(
            grant.refresh_token,
            grant.client_id,
            grant.client_secret,
            request.remoteAddress
          )
    return ok(issued)
  }).pipe(
    Effect.catchAll((error) => {
      if (error instanceof LoginThrottled)
        return Effect.map(Clock.currentTimeMillis, (now) => throttled(error, now))
      // RFC 6749 §5.2: a client that tried HTTP Basic gets the challenge back with its 401.
      const challenge =
        oauthErrorOf(error) === "invalid_client" &&
        /^Basic(\s|$)/i.test(request.headers["authorization"] ?? "")
      return Effect.succeed(
        tokenErrorResponse(
          error,
          undefined,
          challenge ? { "www-authenticate": 'Basic realm="rfq-service"' } : {}
        )
      )
    })
  )

const apiAuth = (request: RouteRequest): Effect.Effect<RouteResponse, never, Auth> =>
  Effect.gen(function* () {
    const auth = yield* Auth
    const body = yield* parseJsonObjectBody(request.body)
    const credentials = yield* decodeRequestEither(AuthRequest, body)
    return ok(
      yield* auth.clientCredentials(
        credentials.clientId,
        credentials.clientSecret,
        API_ACCESS_TOKEN_SECONDS,
        false,
        request.remoteAddress
      )
    )
  }).pipe(
    Effect.catchAll((error) =>
      error instanceof LoginThrottled
        ? Effect.map(Clock.currentTimeMillis, (now) => throttled(error, now))
        : Effect.succeed(tokenErrorResponse(error))
    )
  )

/** The token endpoints, for the router table; they need `Auth` in the handler context. */
export const authRoutes: ReadonlyArray<Route<Auth>> = [
  route("POST", "/oauth/token", oauthToken),
  route("POST", "/v1/auth", apiAuth)
]
