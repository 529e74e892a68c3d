import { expect } from "vitest"
import type { RpcReply } from "./reliability/WsClient.js"

/**
 * The scenarios' check of a JSON-RPC error, with Vitest's \`expect\`: apart from \`RpcSession.ts\`,
 * which the reliability runner (\`npm run test:reliability\`, plain Node) also loads, and where
 * importing Vitest outside a Vitest run throws at load.
 */

export interface RpcErrorExpectation {
  readonly code: number
  readonly message: string
  /** The HTTP status the same error has over REST (`data.status`). */
  readonly status: number
  /** Each must occur, as a substring, in one of `data.reason`. */
  readonly reasonIncludes?: ReadonlyArray<string>
}

/** The JSON-RPC form of a REST error: code, the REST message, `data: {status, reason: [...]}`. */
export const expectRpcError = (reply: RpcReply, expected: RpcErrorExpectation): ReadonlyArray<string> => {
  const describe = JSON.stringify(reply).slice(0, 2000)
  expect(reply.error, describe).toBeDefined()
  expect(reply, describe).not.toHaveProperty("result")
  const error = reply.error!
  expect({ code: error.code, message: error.message }, describe).toEqual({
    code: expected.code,
    message: expected.message
  })
  const data = error.data as { status?: unknown; reason?: unknown } | undefined
  expect(data?.status, describe).toBe(expected.status)
  expect(Array.isArray(data?.reason), describe).toBe(true)
  const reasons = data!.reason as ReadonlyArray<string>
  for (const part of expected.reasonIncludes ?? []) {
    expect(
      reasons.some((r) => r.includes(part)),
      `expected a reason containing "${part}": ${describe}`
    ).toBe(true)
  }
  return reasons
}
