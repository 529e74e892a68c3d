/**
 * The multi-host scenario's CPU blocks (`children/forwardCost.ts` sends them, `scenarios/MultiHost.ts`
 * reads each host's CPU around them): blocks of requests of one kind, `CPU_IN_FLIGHT` at a time,
 * each op sent to its RFQ's owner and forwarded by the other host, in both orders.
 */

/** Requests a CPU block keeps in flight. */
export const CPU_IN_FLIGHT = 4

export type ForwardOp = "read" | "write"
export type ForwardKind = "owner" | "forwarded"

/** The CPU blocks' order: each op's two kinds, then again the other way round. */
export const cpuBlocks = (): ReadonlyArray<{ readonly op: ForwardOp; readonly kind: ForwardKind }> =>
  (["read", "write"] as const).flatMap((op) =>
    (["owner", "forwarded", "forwarded", "owner"] as const).map((kind) => ({ op, kind }))
  )
