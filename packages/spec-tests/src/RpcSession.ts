import { connectWs, type RpcReply, type WsConnection } from "./reliability/WsClient.js"
import type { Party, World } from "./World.js"

/**
 * A JSON-RPC session of one demo party for the black-box scenarios: connected to the world's host,
 * authenticated with the party's token, kept alive with heartbeat notifications (which are never
 * answered) until it is closed. `use` closes it whatever the scenario does.
 */
export interface RpcSession {
  readonly connection: WsConnection
  /** One call; the reply whose `id` matches (an error object when none came). */
  readonly call: (method: string, params?: unknown) => Promise<RpcReply>
  /** The result of a call that must succeed. */
  readonly result: <T = any>(method: string, params?: unknown) => Promise<T>
  readonly close: () => void
}

const HEARTBEAT_EVERY_MS = 10_000

export const openRpcSession = async (w: World, party: Party): Promise<RpcSession> => {
  const connection = await connectWs(w.api.baseUrl)
  const heartbeat = setInterval(() => {
    if (connection.socket.readyState === connection.socket.OPEN) {
      connection.socket.send(JSON.stringify({ jsonrpc: "2.0", method: "heartbeat" }))
    }
  }, HEARTBEAT_EVERY_MS)
  const close = () => {
    clearInterval(heartbeat)
    connection.close()
  }
  const call = (method: string, params?: unknown) => connection.rpc(method, params)
  const result = async <T>(method: string, params?: unknown): Promise<T> => {
    const reply = await call(method, params)
    if (reply.error !== undefined || !("result" in reply)) {
      throw new Error(`${method} failed: ${JSON.stringify(reply).slice(0, 2000)}`)
    }
    return reply.result as T
  }
  try {
    const auth = await call("auth", { token: w.token(party) })
    if (auth.error !== undefined) throw new Error(`auth failed: ${JSON.stringify(auth)}`)
  } catch (error) {
    close()
    throw error
  }
  return { connection, call, result, close }
}

/** Runs `body` with a session of `party` and closes the session afterwards. */
export const withRpcSession = async <A>(
  w: World,
  party: Party,
  body: (session: RpcSession) => Promise<A>
): Promise<A> => {
  const session = await openRpcSession(w, party)
  try {
    return await body(session)
  } finally {
    session.close()
  }
}
