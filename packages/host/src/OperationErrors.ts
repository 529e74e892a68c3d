import { catalog, type Endpoint, type ErrorKey } from "@rfq/engine"

/**
 * The error statuses each operation can answer, for the documents: every status a generated
 * client must expect gets the error body, and no status it can never see is promised.
 *
 * - 400 when the operation takes input (a path, query or body field): the decoder's `invalid
 *   request` and the catalog's specific 400s;
 * - 401, 403, 429, 500 and 503 always: a bearer token is checked, a user without the role needed
 *   (or without any role) is refused, every request counts against the rate limit, and any call
 *   may meet a fault or a database that does not answer;
 * - 404 with the messages listed below; an operation not listed (a new one) is published with a
 *   generic 404, so the document never leaves one out;
 * - 413 when the operation reads a body.
 */

/** The 404 messages of each operation, by JSON-RPC name (`[]`: the operation never answers 404). */
const notFoundKeys: Readonly<Record<string, ReadonlyArray<ErrorKey>>> = {
  "v1/account/exchange-credentials": [],
  "v1/account/exchange-credentials/get": ["credentialsNotFound"],
  "v1/account/exchange-credentials/create": ["exchangeNotFound"],
  "v1/account/exchange-credentials/delete": ["credentialsNotFound"],
  "v1/account/otc-counterparty": [],
  // Unknown aliases are answered per block trade, in the 200's elements.
  "v1/block-trade/bulk": [],
  "v1/exchange/maker": [],
  "v1/exchange/instruments": ["exchangeNotFound"],
  "v1/rfq/list": [],
  "v1/quote/list": [],
  "v1/rfq/get": ["rfqNotFound"],
  "v1/rfq/create": ["makerNotFound", "credentialsNotFound"],
  "v1/rfq/delete": ["rfqNotFound"],
  "v1/rfq/cancel": ["rfqNotFound"],
  "v1/rfq/quotes": ["rfqNotFound"],
  "v1/rfq/trade": ["recordNotFound"],
  "v1/rfq/leg-prices": ["rfqNotFound"],
  // A desk that is not a maker is told `rfq not found` by every quote command.
  "v1/quote/create": ["rfqNotFound", "credentialsNotFound"],
  "v1/quote/update": ["recordNotFound", "rfqNotFound", "credentialsNotFound"],
  "v1/quote/delete": ["recordNotFound", "rfqNotFound"],
  "v1/quote/cancel-all": ["rfqNotFound"],
  "v1/trades/public": [],
  // Market-maker protection: only a delete or a reset names a currency that may have no config.
  "v1/mmp/config": [],
  "v1/mmp/config/set": [],
  "v1/mmp/config/delete": ["recordNotFound"],
  "v1/mmp/reset": ["recordNotFound"],
  "v1/mmp/status": []
}

/** Operations whose 403 has a cause besides the caller's role (same message, `insufficient permissions`). */
const forbiddenAlso: Readonly<Record<string, string>> = {
  "v1/mmp/config/set": "or the caller's desk is not a maker desk (no market-maker protection)",
  "v1/mmp/config/delete": "or the caller's desk is not a maker desk (no market-maker protection)",
  "v1/mmp/reset": "or the caller's desk is not a maker desk (no market-maker protection)"
}

/** The JSON-RPC names with their own list of 404 messages (the documents' test checks it covers every operation). */
export const operationsWithNotFoundList: ReadonlyArray<string> = Object.keys(notFoundKeys)

const messagesOf = (keys: ReadonlyArray<ErrorKey>): string =>
  keys.map((key) => `\`${catalog[key].message}\``).join(", ")

const byStatus = (status: number, except: ReadonlyArray<ErrorKey> = []): Array<ErrorKey> =>
  (Object.keys(catalog) as Array<ErrorKey>).filter(
    (key) => catalog[key].status === status && !except.includes(key)
  )

/** Spec messages no situation of this service produces (docs/api.md, "Catalog"). */
const neverAnswered: ReadonlyArray<ErrorKey> = [
  "authenticationNotEnabled",
  "loginDisabled",
  "invalidClientId"
]

export interface ErrorStatus {
  readonly status: number
  readonly description: string
}

const bearerErrors: ReadonlyArray<ErrorStatus> = [
  {
    status: 401,
    description: `No valid bearer token: ${messagesOf(byStatus(401, neverAnswered))}.`
  },
  {
    status: 403,
    description: `The caller's role does not allow it: ${messagesOf(["insufficientPermissions"])}.`
  }
]

const alwaysAfter: ReadonlyArray<ErrorStatus> = [
  {
    status: 429,
    description: `${messagesOf(["rateLimitExceeded"])}: past the rate limit; nothing of the request ran. Wait until \`X-RateLimit-Reset\`.`
  },
  { status: 500, description: `${messagesOf(["internalError"])}: a fault of the server.` },
  {
    status: 503,
    description: `${messagesOf(["serviceUnavailable"])}: shutting down, the database did not answer, or the RFQ moved to another host; safe to send again.`
  }
]

/** The error statuses of `endpoint`, ascending; `takesInput` when it has any path, query or body field. */
export const operationErrors = (endpoint: Endpoint, takesInput: boolean): Array<ErrorStatus> => {
  const notFound = notFoundKeys[endpoint.rpc]
  const statuses: Array<ErrorStatus> = [
    ...(takesInput
      ? [
          {
            status: 400,
            description: `Invalid input: ${messagesOf(["invalidRequest"])} with one \`reason\` per problem (\`field: problem\`), or a more specific 400 of the catalog (docs/api.md).`
          }
        ]
      : []),
    bearerErrors[0]!,
    forbiddenAlso[endpoint.rpc] === undefined
      ? bearerErrors[1]!
      : {
          status: 403,
          description: `The caller's role does not allow it, ${forbiddenAlso[endpoint.rpc]}: ${messagesOf(["insufficientPermissions"])}.`
        },
    ...(notFound === undefined
      ? [{ status: 404, description: "Not found (a 404 of the catalog, docs/api.md)." }]
      : notFound.length === 0
        ? []
        : [{ status: 404, description: `Not found: ${messagesOf(notFound)}.` }]),
    ...(endpoint.from === "body"
      ? [{ status: 413, description: `${messagesOf(["payloadTooLarge"])}: a body over 1 MiB.` }]
      : []),
    ...alwaysAfter
  ]
  return statuses
}

/** The error statuses of the token endpoints (no bearer token; their bodies add `error`). */
export const tokenEndpointErrors: ReadonlyArray<ErrorStatus> = [
  { status: 400, description: "Malformed request: `invalid request`, `empty value` (OAuth `error`)." },
  {
    status: 401,
    description: `Unknown client, wrong secret or grant: ${messagesOf(["invalidClientId", "tokenExpiredOrInvalid", "accountInactive"])}.`
  },
  { status: 413, description: `${messagesOf(["payloadTooLarge"])}: a body over 1 MiB.` },
  {
    status: 429,
    description:
      "`rate limit exceeded`: requests per address, or failed client-secret checks per address or client id (then with `Retry-After`; the secret is not checked)."
  },
  ...alwaysAfter.slice(1)
]
