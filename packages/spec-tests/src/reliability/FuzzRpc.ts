import fc from "fast-check"
import { jsonLeaf, mutated } from "./Fuzz.js"
import { connectWs, type WsConnection } from "./WsClient.js"

/**
 * JSON-RPC frames for the fuzzing run, generated from the method table and from mutated valid
 * messages (the REST generator's mutations), and the oracle for their replies: a result, or an
 * error object with a standard code (or one of the implementation-defined -32000…-32099), and never
 * an internal error that carries a 5xx status.
 */
export const DOCUMENTED_RPC_CODES = new Set([-32700, -32600, -32601, -32602, -32603, -32001, -32003, -32004])

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
