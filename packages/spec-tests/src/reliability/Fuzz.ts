import fc from "fast-check"
import { call, isStandardError, tokenFor } from "./Http.js"
import { CALL_SPREAD } from "./Lifecycle.js"

/**
 * Fuzzing with fast-check. REST: requests generated from the route table and from mutated valid
 * bodies (fields dropped, retyped, replaced by arbitrary JSON, nested, truncated, invalid UTF-8),
 * with fuzzed ids, query strings and headers (JSON-RPC frames: FuzzRpc.ts). The oracle is the
 * contract's: never a 5xx, an error always the standard body, and the host alive at the end.
 */
export const DOCUMENTED_STATUSES = new Set([200, 400, 401, 403, 404, 405, 413, 429])

const ROUTES: ReadonlyArray<readonly [string, string]> = [
  ["GET", "/v1/account/exchange-credentials"],
  ["GET", "/v1/account/exchange-credentials/{id}"],
  ["POST", "/v1/account/exchange-credentials"],
  ["DELETE", "/v1/account/exchange-credentials/{id}"],
  ["GET", "/v1/account/otc-counterparty"],
  ["POST", "/v1/block-trade/bulk"],
  ["GET", "/v1/exchange/maker"],
  ["GET", "/v1/exchange/instruments"],
  ["GET", "/v1/rfq"],
  ["GET", "/v1/rfq/quotes"],
  ["GET", "/v1/rfq/{id}"],
  ["POST", "/v1/rfq/{id}"],
  ["DELETE", "/v1/rfq/{id}"],
  ["POST", "/v1/rfq/cancel"],
  ["GET", "/v1/rfq/{id}/quote"],
  ["POST", "/v1/rfq/trade"],
  ["POST", "/v1/rfq/leg-prices"],
  ["POST", "/v1/rfq/quote"],
  ["PUT", "/v1/rfq/quote"],
  ["DELETE", "/v1/rfq/quote"],
  ["POST", "/v1/rfq/quote/cancel-all"],
  ["POST", "/oauth/token"],
  ["POST", "/v1/auth"],
  ["GET", "/healthz"],
  ["GET", "/readyz"]
]

/** Valid messages to mutate. */
const SEEDS: ReadonlyArray<Record<string, unknown>> = [
  {
    baseCurrency: "BTC",
    amount: 50,
    anonymous: false,
    settlementOptions: ["DBT"],
    makers: { DBT: ["maker-3"] },
    legs: CALL_SPREAD
  },
  {
    rfqId: 1,
    direction: "sell",
    amount: 50,
    settlementOption: "DBT",
    legs: [{ instrumentName: "BTC-27DEC30-90000-C", price: 0.1 }]
  },
  { rfqQuoteId: 1 },
  { rfqId: 1 },
  { rfqId: 1, price: 0.05, legs: [{ direction: "buy", instrumentName: "BTC-27DEC30-90000-C", ratio: 1 }] },
  { rfqQuoteId: 1, label: "x", amount: 25, settlementOption: "DBT", legs: [] },
  { alias: "fuzz", exchange: "DBT", clientId: "c", clientSecret: "s" },
  {
    timestamp: 1,
    blockTrades: [
      { nonce: "n", makerExchangeCredentials: "dbt-main", takerExchangeCredentials: "dbt-main", trades: [] }
    ]
  },
  { clientId: "demo-maker-3", clientSecret: "wrong" },
  { grant_type: "client_credentials", client_id: "x", client_secret: "y" }
]

export const jsonLeaf = fc.oneof(
  fc.constant(null),
  fc.boolean(),
  fc.integer(),
  fc.double(),
  fc.constantFrom(0, -1, 1e308, -1e-308, 2 ** 53 + 1, 0.1 + 0.2, 1e21),
  fc.string({ maxLength: 20 }),
  fc.constantFrom(
    "",
    " ",
    "BTC",
    "DBT",
    "buy",
    "NaN",
    "Infinity",
    "1e999",
    "\u0000",
    "💥",
    "__proto__",
    "<script>"
  )
)

/** A valid message with one or more mutations applied. */
export const mutated: fc.Arbitrary<unknown> = fc
  .tuple(
    fc.constantFrom(...SEEDS),
    fc.array(
      fc.tuple(
        fc.constantFrom("drop", "retype", "replace", "nest", "array", "proto", "deep"),
        fc.nat(),
        fc.oneof(jsonLeaf, fc.jsonValue({ maxDepth: 3 }))
      ),
      { minLength: 1, maxLength: 4 }
    )
  )
  .map(([seed, mutations]) => {
    let value: Record<string, unknown> = structuredClone(seed) as Record<string, unknown>
    for (const [kind, at, replacement] of mutations) {
      const keys = Object.keys(value)
      const key = keys[at % Math.max(1, keys.length)] ?? "x"
      switch (kind) {
        case "drop":
          delete value[key]
          break
        case "retype":
          value[key] =
            typeof value[key] === "number"
              ? String(value[key])
              : typeof value[key] === "string"
                ? 1
                : [value[key]]
          break
        case "replace":
          value[key] = replacement
          break
        case "nest":
          value = { [key]: value }
          break
        case "array":
          value[key] = [value[key], replacement]
          break
        case "proto": {
          // An own "__proto__" key, as JSON.parse makes it (an object literal would set the prototype).
          const rest = JSON.stringify(value).slice(1)
          value = JSON.parse(
            `{"__proto__":${JSON.stringify(replacement) ?? "null"}${rest === "}" ? "" : ","}${rest}`
          )
          break
        }
        case "deep":
          value[key] = JSON.parse(`${"[".repeat(200 + (at % 800))}1${"]".repeat(200 + (at % 800))}`)
          break
      }
    }
    return value
  })

type Body =
  | { readonly kind: "none" }
  | { readonly kind: "text"; readonly text: string }
  | { readonly kind: "bytes"; readonly bytes: Uint8Array }

const body: fc.Arbitrary<Body> = fc.oneof(
  { weight: 1, arbitrary: fc.constant<Body>({ kind: "none" }) },
  { weight: 6, arbitrary: mutated.map((v): Body => ({ kind: "text", text: JSON.stringify(v) })) },
  { weight: 2, arbitrary: fc.jsonValue().map((v): Body => ({ kind: "text", text: JSON.stringify(v) })) },
  {
    weight: 1,
    arbitrary: fc.tuple(mutated, fc.nat()).map(([v, cut]): Body => {
      const text = JSON.stringify(v)
      return { kind: "text", text: text.slice(0, cut % (text.length + 1)) }
    })
  },
  { weight: 1, arbitrary: fc.uint8Array({ maxLength: 64 }).map((bytes): Body => ({ kind: "bytes", bytes })) },
  {
    weight: 1,
    arbitrary: fc.string({ unit: "binary", maxLength: 40 }).map((text): Body => ({ kind: "text", text }))
  }
)

const idSegment = fc.oneof(
  fc.nat({ max: 50 }).map(String),
  fc.integer().map(String),
  fc.constantFrom(
    "0",
    "-1",
    "1.5",
    "1e3",
    "0x1",
    "9".repeat(40),
    "null",
    "%00",
    "%FF",
    "%",
    "..",
    "quotes",
    "%2F",
    "a b"
  ),
  fc.string({ maxLength: 10 }).map(encodeURIComponent)
)

const queryString = fc
  .array(
    fc.tuple(
      fc.constantFrom(
        "limit",
        "cursor",
        "status",
        "role",
        "startTime",
        "endTime",
        "baseCurrency",
        "rfqId",
        "exchange",
        "kind",
        "x",
        "limit[]"
      ),
      fc.oneof(
        fc.string({ maxLength: 12 }),
        fc.integer().map(String),
        fc.constantFrom("0", "1000", "1001", "-1", "open,traded", "taker", "1e3", "")
      )
    ),
    { maxLength: 4 }
  )
  .map((pairs) => pairs.map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v)}`).join("&"))

export interface FuzzRequest {
  readonly method: string
  readonly path: string
  readonly auth: "taker" | "maker" | "viewer" | "junk" | "none"
  readonly contentType: string | undefined
  readonly body: Body
}

export const fuzzRequest: fc.Arbitrary<FuzzRequest> = fc
  .record({
    route: fc.constantFrom(...ROUTES),
    otherMethod: fc.option(fc.constantFrom("GET", "POST", "PUT", "DELETE", "PATCH", "OPTIONS"), { freq: 5 }),
    id: idSegment,
    extraSegment: fc.option(fc.constantFrom("x", "", "..", "%2e%2e"), { freq: 8 }),
    query: queryString,
    auth: fc.constantFrom("taker", "taker", "maker", "viewer", "junk", "none"),
    contentType: fc.option(
      fc.constantFrom(
        "application/json",
        "text/plain",
        "application/x-www-form-urlencoded",
        "multipart/form-data; boundary=x",
        "application/json; charset=latin1",
        "\u00e9"
      ),
      { freq: 2 }
    ),
    body
  })
  .map(({ route, otherMethod, id, extraSegment, query, auth, contentType, body }) => ({
    method: otherMethod ?? route[0],
    path: `${route[1].replace("{id}", id)}${extraSegment === null ? "" : `/${extraSegment}`}${query === "" ? "" : `?${query}`}`,
    auth,
    contentType: contentType ?? (body.kind === "none" ? undefined : "application/json"),
    body
  }))

export interface FuzzTokens {
  readonly taker: string
  readonly maker: string
  readonly viewer: string
}

export const fuzzTokens = async (base: string): Promise<FuzzTokens> => ({
  taker: await tokenFor(base, "demo-taker"),
  maker: await tokenFor(base, "demo-maker-3"),
  viewer: await tokenFor(base, "demo-viewer")
})

/** Sends one generated request; returns a description of what is wrong with the answer, if anything. */
export const sendFuzzRequest = async (
  base: string,
  tokens: FuzzTokens,
  r: FuzzRequest
): Promise<string | undefined> => {
  const headers: Record<string, string> = {}
  if (r.contentType !== undefined) headers["content-type"] = r.contentType
  const token = r.auth === "junk" ? "x.y.z" : r.auth === "none" ? undefined : tokens[r.auth]
  const sendsBody = r.body.kind !== "none" && r.method !== "GET" && r.method !== "HEAD"
  const a = await call(base, r.method, r.path, {
    token,
    headers,
    ...(sendsBody
      ? { body: r.body.kind === "text" ? r.body.text : (r.body as { bytes: Uint8Array }).bytes }
      : {})
  })
  if (a.status >= 500) return `${a.status} ${a.text.slice(0, 200)}`
  if (!DOCUMENTED_STATUSES.has(a.status)) return `undocumented status ${a.status}`
  if (a.status !== 200 && !isStandardError(a))
    return `non-standard error body ${a.status} ${a.text.slice(0, 200)}`
  return undefined
}
