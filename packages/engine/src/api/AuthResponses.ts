import { Schema } from "effect"
import { WsChannel } from "./AuthRequests.js"
import { Count, optional, responseObject, Text, Timestamp } from "./ResponseFields.js"

/** Error bodies, token answers and WebSocket results. */

/** The spec's error body; `code` equals the HTTP status. */
export const ErrorBody = responseObject("ErrorBody", "The error body of every failed request.", {
  code: Schema.Int.annotations({ description: "The HTTP status." }),
  message: Text.annotations({ description: "A message of the spec's error tables." }),
  reason: optional(Schema.Array(Text).annotations({ description: "Details, one per problem." }))
})
export type ErrorBody = typeof ErrorBody.Type

export const OAuthErrorCode = Schema.Literal(
  "invalid_request",
  "invalid_client",
  "invalid_grant",
  "unauthorized_client",
  "unsupported_grant_type",
  "invalid_scope"
)
export type OAuthErrorCode = typeof OAuthErrorCode.Type

export const TokenErrorBody = responseObject(
  "TokenErrorBody",
  "Error body of the token endpoints: the standard body plus the RFC 6749 `error` code.",
  { ...ErrorBody.fields, error: OAuthErrorCode }
)
export type TokenErrorBody = typeof TokenErrorBody.Type

export const OAuthTokenResponse = responseObject("OAuthTokenResponse", "Answer of `POST /oauth/token`.", {
  access_token: Text,
  expires_in: Count.annotations({ description: "Access token lifetime in seconds (300)." }),
  refresh_expires_in: Count.annotations({ description: "Refresh token lifetime in seconds (1800)." }),
  refresh_token: Text.annotations({ description: "One-time refresh token; each use rotates it." }),
  token_type: Schema.Literal("Bearer")
})
export type OAuthTokenResponse = typeof OAuthTokenResponse.Type

export const AuthResponse = responseObject("AuthResponse", "Answer of `POST /auth`.", {
  access_token: Text,
  token_type: Schema.Literal("Bearer"),
  expires_in: Count.annotations({ description: "Access token lifetime in seconds (3600)." })
})
export type AuthResponse = typeof AuthResponse.Type

export const WsAuthResult = responseObject("WsAuthResult", "Result of the `auth` method.", {
  success: Schema.Boolean,
  token: optional(Text.annotations({ description: "A new access token (client credentials only)." }))
})
export type WsAuthResult = typeof WsAuthResult.Type

export const HeartbeatResult = responseObject("HeartbeatResult", "Result of the `heartbeat` method.", {
  time: Timestamp.annotations({ description: "When the heartbeat was received (unix ms)." })
})
export type HeartbeatResult = typeof HeartbeatResult.Type

export const SubscribeResult = responseObject(
  "SubscribeResult",
  "Result of `v1/subscribe` / `v1/unsubscribe`.",
  {
    status: Schema.Literal("subscribed", "unsubscribed"),
    channels: Schema.Array(WsChannel)
  }
)
export type SubscribeResult = typeof SubscribeResult.Type

export const HealthResponse = responseObject(
  "HealthResponse",
  "Answer of `GET /healthz` and `GET /readyz`.",
  {
    status: Text.annotations({ description: "`ok` when healthy." })
  }
)
export type HealthResponse = typeof HealthResponse.Type
