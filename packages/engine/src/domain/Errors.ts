import { Schema } from "effect"

/**
 * The error catalog: every message of the spec's error tables, with its HTTP status. Clients see
 * `{ code: status, message, reason? }`; the host maps the status to a JSON-RPC code in one table.
 * Messages are the spec's, in lower case, verbatim (including the spec's own spelling).
 */
export const catalog = {
  // authentication
  missingBearerToken: { status: 401, message: "missing bearer token" },
  invalidAuthorizationHeader: { status: 401, message: "invalid authorization header" },
  tokenExpiredOrInvalid: { status: 401, message: "authorisation token expired or not valid" },
  invalidTokenClaims: { status: 401, message: "invalid token claims" },
  invalidClientId: { status: 401, message: "invalid client ID" },
  insufficientPermissions: { status: 403, message: "insufficient permissions" },
  accountInactive: { status: 401, message: "account is inactive" },
  authenticationNotEnabled: { status: 401, message: "authentication is not enabled" },
  loginDisabled: { status: 401, message: "login is disabled" },
  // validation (details in `reason`)
  invalidOptionFormat: { status: 400, message: "invalid option format" },
  invalidExpiryDateFormat: { status: 400, message: "invalid expiry date format" },
  invalidFutureSpreadDatesFormat: { status: 400, message: "invalid future spread dates format" },
  invalidInstrumentFormat: { status: 400, message: "invalid instrument format" },
  invalidFutureSpreadFormat: { status: 400, message: "invalid future spread format" },
  invalidBase64Encoding: { status: 400, message: "invalid base64 encoding" },
  emptyValue: { status: 400, message: "empty value" },
  invalidRequest: { status: 400, message: "invalid request" },
  // RFQ
  rfqNotFound: { status: 404, message: "rfq not found" },
  canOnlySaveDraft: { status: 400, message: "can only save a draft RFQ" },
  canOnlyDeleteDraftOrCancelled: { status: 400, message: "can only delete a draft or cancelled RFQ" },
  canOnlyPublishDraft: { status: 400, message: "can only publish a draft RFQ" },
  canOnlyCancelInProgress: { status: 400, message: "can only cancel an in progress RFQ" },
  rfqExpired: { status: 400, message: "RFQ has expired" },
  cannotQuoteOwnRfq: { status: 400, message: "can't quote on own RFQ" },
  duplicateClientQuoteId: { status: 400, message: "a quote with the same clientQuoteId already exists" },
  invalidPrice: { status: 400, message: "invalid price" },
  priceTooLow: { status: 400, message: "price is too low" },
  priceTooHigh: { status: 400, message: "price is too high" },
  multipleQuotesFound: { status: 400, message: "multiple quotes found for the same RFQ" },
  // market-maker protection (an addition: docs/api.md, "Market-maker protection")
  mmpFrozen: { status: 400, message: "mmp frozen" },
  // Beyond the spec (issue 16): a quote past its `validUntil` cannot be accepted.
  quoteExpired: { status: 400, message: "quote has expired" },
  // exchange and instrument
  exchangeNotFound: { status: 404, message: "exchange not found" },
  exchangeNotImplemented: { status: 400, message: "exchange not implemented" },
  makerNotFound: { status: 404, message: "maker not found" },
  unableToParseInstrument: { status: 400, message: "unable to parse instrument" },
  instrumentNotFoundForLeg: { status: 400, message: "instrument not found for leg" },
  instrumentNotFoundForHedge: { status: 400, message: "instrument not found for hedge" },
  failedToFetchInstrumentForLeg: { status: 500, message: "failed to fetch instrument for leg" },
  failedToFetchInstrumentForHedge: { status: 500, message: "failed to fetch instrument for hedge" },
  failedToConvertRatio: { status: 400, message: "failed to convert ratio to int" },
  // user, account and entity
  duplicateEmail: { status: 400, message: "individual with same e-mail already exists" },
  duplicateMessagingHandle: { status: 400, message: "individual with same messaging handle already exists" },
  duplicateCredentialsAlias: {
    status: 400,
    message: "exchange credentials with the same alias already exists"
  },
  credentialsNotFound: { status: 404, message: "credentials not found" },
  encryptionKeyNotFound: { status: 500, message: "encryption key not found" },
  encryptedValueTooShort: { status: 400, message: "encrypted value too short" },
  invalidPadding: { status: 400, message: "invalid padding" },
  failedToUnmarshalCredentials: { status: 500, message: "failed to unmarshal exchange credentials" },
  deskNotFound: { status: 404, message: "desk not found" },
  recordNotFound: { status: 404, message: "record not found" },
  // general statuses of the spec's status table
  notFound: { status: 404, message: "not found" },
  methodNotAllowed: { status: 405, message: "method not allowed" },
  payloadTooLarge: { status: 413, message: "request body too large" },
  rateLimitExceeded: { status: 429, message: "rate limit exceeded" },
  internalError: { status: 500, message: "internal server error" },
  serviceUnavailable: { status: 503, message: "service unavailable" }
} as const satisfies Record<string, { readonly status: number; readonly message: string }>

export type ErrorKey = keyof typeof catalog
export const ErrorKey = Schema.Literal(...(Object.keys(catalog) as Array<ErrorKey>))

/**
 * The one error type that reaches clients. `key` names the catalog entry; `status` and `message`
 * are always the catalog's, so a caller cannot invent a message outside the spec's tables.
 */
export class ApiError extends Schema.TaggedError<ApiError>()("ApiError", {
  key: ErrorKey,
  status: Schema.Number,
  message: Schema.String,
  reason: Schema.optional(Schema.Array(Schema.String))
}) {
  /** The error body of the spec: `{code, message, reason?}`. */
  toBody(): { code: number; message: string; reason?: ReadonlyArray<string> } {
    return this.reason === undefined || this.reason.length === 0
      ? { code: this.status, message: this.message }
      : { code: this.status, message: this.message, reason: this.reason }
  }
}

/** Builds the catalog error `key`, optionally with human-readable reasons. */
export const apiError = (key: ErrorKey, reason?: ReadonlyArray<string> | string): ApiError => {
  const entry = catalog[key]
  const reasons = reason === undefined ? undefined : typeof reason === "string" ? [reason] : reason
  return new ApiError(
    reasons === undefined
      ? { key, status: entry.status, message: entry.message }
      : { key, status: entry.status, message: entry.message, reason: reasons }
  )
}

export const isApiError = (u: unknown): u is ApiError => u instanceof ApiError
