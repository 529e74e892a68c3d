import { Schema } from "effect"
import { literalField, textField } from "./Fields.js"
import { arrayOf, duplicateIssues, named, object, optional } from "./Objects.js"

/** Request schemas of the token endpoints and of the WebSocket session methods. */

const ClientIdField = textField(256).annotations({ description: "API client id." })
const ClientSecretField = textField(1024).annotations({ description: "API client secret." })
const TokenField = textField(8192)

/** `POST {auth_url}` form, `grant_type=client_credentials`. */
export const ClientCredentialsGrant = object({
  grant_type: Schema.Literal("client_credentials"),
  client_id: ClientIdField,
  client_secret: ClientSecretField
}).annotations(named("ClientCredentialsGrant", "Token request with the client credentials grant."))
export type ClientCredentialsGrant = typeof ClientCredentialsGrant.Type

/** `POST {auth_url}` form, `grant_type=refresh_token` (the spec lists the client credentials too). */
export const RefreshTokenGrant = object({
  grant_type: Schema.Literal("refresh_token"),
  refresh_token: TokenField.annotations({ description: "The refresh token of the previous token response." }),
  client_id: ClientIdField,
  client_secret: ClientSecretField
}).annotations(named("RefreshTokenGrant", "Token request with the refresh token grant."))
export type RefreshTokenGrant = typeof RefreshTokenGrant.Type

/**
 * The form fields of `POST {auth_url}` (the host parses the form first), decoded into one of the
 * two grants. Decoded from one flat object rather than a union of the grants: Effect's union parser
 * calls `String()` on a discriminant value, which overflows on a deeply nested array and throws on
 * an object whose `toString` is not a function, and decoding must never throw.
 */
const OAuthTokenForm = object({
  grant_type: literalField(Schema.Literal("client_credentials", "refresh_token")),
  refresh_token: optional(RefreshTokenGrant.fields.refresh_token),
  client_id: ClientIdField,
  client_secret: ClientSecretField
}).pipe(
  Schema.filter((form) =>
    form.grant_type === "refresh_token" && form.refresh_token === undefined
      ? { path: ["refresh_token"], message: "is missing" }
      : undefined
  )
)

export const OAuthTokenRequest = Schema.transform(
  OAuthTokenForm,
  Schema.Union(Schema.typeSchema(ClientCredentialsGrant), Schema.typeSchema(RefreshTokenGrant)),
  {
    strict: true,
    decode: (form): ClientCredentialsGrant | RefreshTokenGrant =>
      form.grant_type === "refresh_token"
        ? {
            grant_type: "refresh_token",
            refresh_token: form.refresh_token ?? "",
            client_id: form.client_id,
            client_secret: form.client_secret
          }
        : { grant_type: "client_credentials", client_id: form.client_id, client_secret: form.client_secret },
    encode: (grant) => grant
  }
).annotations(
  named("OAuthTokenRequest", "Form fields of `POST /oauth/token` (application/x-www-form-urlencoded).")
)
export type OAuthTokenRequest = typeof OAuthTokenRequest.Type

/** `POST /v1/auth` JSON body. */
export const AuthRequest = object({
  clientId: ClientIdField,
  clientSecret: ClientSecretField
}).annotations(
  named("AuthRequest", "Body of `POST /auth`: exchanges client credentials for an access token.")
)
export type AuthRequest = typeof AuthRequest.Type

// ---- WebSocket (JSON-RPC params) ---------------------------------------------------------------

export const WsTokenAuth = object({ token: TokenField.annotations({ description: "An access token." }) })
export const WsClientCredentialsAuth = object({ clientId: ClientIdField, clientSecret: ClientSecretField })

/** `auth` params: `{token}` or `{clientId, clientSecret}`; when both are sent the token is used. */
export const WsAuthParams = Schema.Union(WsTokenAuth, WsClientCredentialsAuth).annotations(
  named("WsAuthParams", "Params of the `auth` method: `{token}` or `{clientId, clientSecret}`.")
)
export type WsAuthParams = typeof WsAuthParams.Type

/** `auth/refresh` params (contract): `{refreshToken}` or `{token}`. */
export const WsAuthRefreshParams = Schema.Union(
  object({ refreshToken: TokenField.annotations({ description: "A refresh token." }) }),
  object({ token: TokenField.annotations({ description: "A newer access token." }) })
).annotations(named("WsAuthRefreshParams", "Params of `auth/refresh`: `{refreshToken}` or `{token}`."))
export type WsAuthRefreshParams = typeof WsAuthRefreshParams.Type

export const WsChannel = Schema.Literal(
  "rfq.maker",
  "rfq.taker",
  "rfq_quote.maker",
  "rfq_quote.taker",
  // The public block-trade tape (issue 16)
  "trades"
)
export type WsChannel = typeof WsChannel.Type

/** `v1/subscribe` / `v1/unsubscribe` params. */
export const SubscribeParams = object({
  channels: arrayOf(literalField(WsChannel), { min: 1, max: WsChannel.literals.length }).pipe(
    Schema.filter((channels) => duplicateIssues(channels, String, ""))
  )
}).annotations(named("SubscribeParams", "Params of `v1/subscribe` and `v1/unsubscribe`."))
export type SubscribeParams = typeof SubscribeParams.Type
