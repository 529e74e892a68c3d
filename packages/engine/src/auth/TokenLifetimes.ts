/**
 * How long each kind of token lives (spec: authentication flows). The host signs the tokens; these
 * decide their `exp`, and the refresh-token rows' `expires_at` with them.
 */

/** `POST /oauth/token` access tokens, and every access token a refresh grant gives (identity provider flow). */
export const OAUTH_ACCESS_TOKEN_SECONDS = 300
/** `POST /v1/auth` and WebSocket `auth` with client credentials (spec: quickstart flow). */
export const API_ACCESS_TOKEN_SECONDS = 3600
export const REFRESH_TOKEN_SECONDS = 1800

export type AccessTokenLifetime = typeof OAUTH_ACCESS_TOKEN_SECONDS | typeof API_ACCESS_TOKEN_SECONDS

/** The expiry a token signed at `now` gets (JWT times are whole seconds), unix ms. */
export const tokenExpiry = (now: number, lifetimeSeconds: number): number =>
  (Math.floor(now / 1000) + lifetimeSeconds) * 1000
