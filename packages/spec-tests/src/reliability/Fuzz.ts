import fc from "fast-check"
import { call, isStandardError, tokenFor } from "./Http.js"
import { CALL_SPREAD } from "./Lifecycle.js"
import { connectWs, type WsConnection } from "./WsClient.js"

/**
 * Fuzzing with fast-check. REST: requests generated from the route table and from mutated valid
 * bodies (fields dropped, retyped, replaced by arbitrary JSON, nested, truncated, invalid UTF-8),
 * with fuzzed ids, query strings and headers. JSON-RPC: frames generated from the method table and
 * mutated valid messages. The oracle is the contract's: never a 5xx, an error always the standard
 * body (REST) or a JSON-RPC error object with a standard code, and the host alive at the end.
 */
export const DOCUMENTED_STATUSES = new Set([200, 400, 401, 403, 404, 405, 413, 429])
export const DOCUMENTED_RPC_CODES = new Set([-32700, -32600, -32601, -32602, -32603, -32001, -32003, -32004])

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

const jsonLeaf = fc.oneof(
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
const mutated: fc.Arbitrary<unknown> = fc
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

// ---- JSON-RPC frames ----------------------------------------------------------------------------

const RPC_METHODS = [
  "auth",
  "auth/refresh",
  "heartbeat",
  "v1/subscribe",
  "v1/unsubscribe",
  "v1/rfq/create",
  "v1/rfq/get",
  "v1/rfq/list",
  "v1/rfq/cancel",
  "v1/rfq/delete",
  "v1/rfq/quotes",
  "v1/rfq/trade",
  "v1/rfq/leg-prices",
  "v1/quote/create",
  "v1/quote/update",
  "v1/quote/delete",
  "v1/quote/list",
  "v1/quote/cancel-all",
  "v1/exchange/maker",
  "v1/exchange/instruments",
  "v1/account/exchange-credentials",
  "v1/account/otc-counterparty",
  "v1/block-trade/bulk",
  "nope"
]

const rpcMessage = fc.record(
  {
    jsonrpc: fc.oneof(fc.constant("2.0"), jsonLeaf),
    id: fc.oneof(
      fc.nat(),
      fc.string({ maxLength: 8 }),
      fc.constant(null),
      fc.double(),
      fc.jsonValue({ maxDepth: 1 })
    ),
    method: fc.oneof(fc.constantFrom(...RPC_METHODS), jsonLeaf),
    params: fc.oneof(mutated, fc.jsonValue({ maxDepth: 2 }), fc.constant(undefined))
  },
  { requiredKeys: [] }
)

/** A frame: a mutated message, a batch of them, or text that is barely JSON. */
export const rpcFrame: fc.Arbitrary<string> = fc.oneof(
  { weight: 6, arbitrary: rpcMessage.map((m) => JSON.stringify(m)) },
  { weight: 2, arbitrary: fc.array(rpcMessage, { maxLength: 5 }).map((b) => JSON.stringify(b)) },
  { weight: 1, arbitrary: fc.jsonValue().map((v) => JSON.stringify(v)) },
  { weight: 1, arbitrary: fc.string({ maxLength: 60 }) },
  {
    weight: 1,
    arbitrary: rpcMessage.chain((m) => fc.nat().map((cut) => JSON.stringify(m).slice(0, cut % 40)))
  }
)

const isRpcError = (reply: unknown): boolean => {
  const r = reply as { jsonrpc?: unknown; error?: { code?: unknown; message?: unknown } }
  return (
    r?.jsonrpc === "2.0" &&
    typeof r.error?.message === "string" &&
    typeof r.error.code === "number" &&
    (DOCUMENTED_RPC_CODES.has(r.error.code) || (r.error.code <= -32000 && r.error.code >= -32099))
  )
}

/**
 * One frame on an authenticated session, followed by a `heartbeat` sentinel: every reply before
 * the sentinel's belongs to the frame (a notification, or a batch of them, gets none). Returns a
 * description of a bad reply, if any; a session the server closed is reported by the caller.
 */
export const sendRpcFrame = async (
  ws: WsConnection,
  frame: string,
  n: number
): Promise<string | undefined> => {
  if (ws.socket.readyState !== 1) return undefined
  const sentinel = `sentinel-${n}`
  ws.socket.send(frame)
  ws.socket.send(JSON.stringify({ jsonrpc: "2.0", id: sentinel, method: "heartbeat" }))
  for (;;) {
    const reply = await ws.receive(10_000)
    if (reply === undefined)
      return ws.socket.readyState === 1 ? `no reply within 10 s after ${frame.slice(0, 120)}` : undefined
    const replies = Array.isArray(reply) ? reply : [reply]
    for (const r of replies) {
      const rr = r as { result?: unknown; error?: unknown; jsonrpc?: unknown; id?: unknown }
      if (rr.id === sentinel) return undefined
      if (rr.error === undefined && rr.result !== undefined && rr.jsonrpc === "2.0") continue
      if (!isRpcError(r)) return `bad reply to ${frame.slice(0, 120)}: ${JSON.stringify(r).slice(0, 200)}`
      const error = (r as { error: { code: number; data?: { status?: number } } }).error
      if (error.code === -32603 && (error.data?.status ?? 0) >= 500)
        return `internal error for ${frame.slice(0, 120)}`
    }
  }
}

export const openRpcSession = async (base: string, token: string): Promise<WsConnection> => {
  const ws = await connectWs(base)
  await ws.rpc("auth", { token })
  return ws
}
