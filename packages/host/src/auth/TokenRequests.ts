import { Buffer } from "node:buffer"
import { type ApiError, apiError, type OAuthErrorCode } from "@rfq/engine"
import { Either } from "effect"
import { type JsonObjectRules, MAX_JSON_DEPTH, parseJsonObject } from "../JsonBody.js"
import type { RouteResponse } from "../Router.js"

/**
 * The HTTP side of the token endpoints: reading form and JSON bodies and HTTP Basic client
 * credentials, and the error bodies with the RFC 6749 `error` code next to the spec's fields.
 */

/** Token responses and errors must not be cached anywhere (RFC 6749 §5.1). */
export const noStoreHeaders: Readonly<Record<string, string>> = {
  "cache-control": "no-store",
  pragma: "no-cache"
}

/** The spec's body (`code`, `message`, `reason?`) plus the OAuth `error` (the engine's `TokenErrorBody`). */
export interface TokenEndpointErrorBody {
  readonly code: number
  readonly message: string
  readonly reason?: ReadonlyArray<string>
  readonly error: OAuthErrorCode
}

export const tokenEndpointError = (error: ApiError, oauthError: OAuthErrorCode): TokenEndpointErrorBody => ({
  ...error.toBody(),
  error: oauthError
})

/**
 * The OAuth code of an error of ours. Statuses stay the catalog's, so a refresh token that is
 * expired, replayed or not ours is `invalid_grant` with 401 (RFC 6749 suggests 400; the spec's
 * message for it is a 401), and an inactive account, which did authenticate, is
 * `unauthorized_client` with 401.
 */
export const oauthErrorOf = (error: ApiError): OAuthErrorCode => {
  switch (error.key) {
    case "invalidClientId":
    case "invalidAuthorizationHeader":
      return "invalid_client"
    case "accountInactive":
    case "loginDisabled":
    case "authenticationNotEnabled":
      return "unauthorized_client"
    case "tokenExpiredOrInvalid":
    case "invalidTokenClaims":
      return "invalid_grant"
    default:
      return "invalid_request"
  }
}

export const tokenErrorResponse = (
  error: ApiError,
  oauthError: OAuthErrorCode = oauthErrorOf(error),
  extraHeaders: Readonly<Record<string, string>> = {}
): RouteResponse => ({
  status: error.status,
  body: tokenEndpointError(error, oauthError),
  headers: { ...noStoreHeaders, ...extraHeaders }
})

const utf8 = new TextDecoder("utf-8", { fatal: true })

const decodeUtf8 = (body: Uint8Array): Either.Either<string, ApiError> => {
  try {
    return Either.right(utf8.decode(body))
  } catch {
    return Either.left(apiError("invalidRequest", "the body is not valid UTF-8"))
  }
}

/**
 * An `application/x-www-form-urlencoded` body as an object of its fields. A field sent twice is
 * refused and an empty one counts as omitted (RFC 6749 §3.1, §3.2).
 */
export const parseFormBody = (body: Uint8Array): Either.Either<Record<string, string>, ApiError> =>
  Either.flatMap(decodeUtf8(body), (text) => {
    const fields = new Map<string, string>()
    for (const [name, value] of new URLSearchParams(text)) {
      if (fields.has(name)) return Either.left(apiError("invalidRequest", `${name}: must not be repeated`))
      fields.set(name, value)
    }
    // fromEntries defines own properties, so a field named `__proto__` stays an ordinary field.
    return Either.right(Object.fromEntries([...fields].filter(([, value]) => value !== "")))
  })

const tokenBodyRules: JsonObjectRules = {
  emptyIsObject: false,
  reasons: {
    notUtf8: "the body is not valid UTF-8",
    tooDeep: `the body is nested deeper than ${MAX_JSON_DEPTH} levels`,
    malformed: "the body is not valid JSON",
    notAnObject: "the body must be a JSON object"
  }
}

/** A JSON body that must be an object, with this endpoint's wording of each refusal. */
export const parseJsonObjectBody = (body: Uint8Array): Either.Either<Record<string, unknown>, ApiError> =>
  parseJsonObject(body, tokenBodyRules)

/** The media type of a `content-type` header, lower case, without parameters. */
export const mediaType = (contentType: string | undefined): string | undefined => {
  const type = contentType?.split(";")[0]?.trim().toLowerCase()
  return type === undefined || type === "" ? undefined : type
}

export interface BasicCredentials {
  readonly clientId: string
  readonly clientSecret: string
}

const formDecode = (text: string): string | undefined => {
  try {
    return decodeURIComponent(text.replaceAll("+", " "))
  } catch {
    return undefined
  }
}

/**
 * Client credentials from `Authorization: Basic …` (RFC 6749 §2.3.1: id and secret are each
 * form-urlencoded, joined by ":", then base64). `undefined` when the header uses another scheme
 * or is absent; an error when it is Basic but unreadable.
 */
export const parseBasicCredentials = (
  header: string | undefined
): Either.Either<BasicCredentials | undefined, ApiError> => {
  const match = header === undefined ? null : /^Basic ([A-Za-z0-9+/]+={0,2})$/i.exec(header)
  if (match === null) {
    return header !== undefined && /^Basic(\s|$)/i.test(header)
      ? Either.left(apiError("invalidAuthorizationHeader"))
      : Either.right(undefined)
  }
  const decoded = Buffer.from(match[1]!, "base64").toString("utf8")
  const colon = decoded.indexOf(":")
  const clientId = colon < 0 ? undefined : formDecode(decoded.slice(0, colon))
  const clientSecret = colon < 0 ? undefined : formDecode(decoded.slice(colon + 1))
  return clientId === undefined || clientSecret === undefined || clientId === ""
    ? Either.left(apiError("invalidAuthorizationHeader"))
    : Either.right({ clientId, clientSecret })
}
