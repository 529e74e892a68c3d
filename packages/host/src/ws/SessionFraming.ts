import { apiError } from "@rfq/engine"
import { Clock, Effect, Fiber, Queue } from "effect"
import { rpcErrorOf } from "../ErrorTable.js"
import { decodeUtf8 } from "../JsonBody.js"
import {
  errorReply,
  parseFrame,
  type RpcCall,
  type RpcEntry,
  type RpcFrame,
  type RpcReply,
  RpcCode
} from "./JsonRpc.js"
import { CloseCode, type SessionTransport } from "./SessionEnvironment.js"

/**
 * The session's framing and back-pressure. A frame is decoded and parsed as it arrives (so a
 * transport may pass a view of a buffer it reuses), then queued: frames are handled one at a time,
 * in order, by one fiber. A client whose unanswered frames pass `maxPendingBytes` of text is cut
 * off (1008). The replies of a batch go out as one array, a single call's alone; notifications get
 * none. (Output back-pressure is the transport's: see `WebSocketEndpoint.ts`.)
 */
export interface FramingOptions {
  readonly transport: SessionTransport
  readonly maxBatch: number
  readonly maxPendingBytes: number
  readonly isOpen: () => boolean
  readonly terminate: (code: number, reason: string) => void
  /** A frame holding a heartbeat arrived at `receivedAt`. */
  readonly onHeartbeat: (receivedAt: number) => void
  /** The reply to one call; `undefined` for a notification, or when the session ends instead. */
  readonly reply: (call: RpcCall, receivedAt: number) => Effect.Effect<RpcReply | undefined>
  /** Runs after a frame's replies went out. */
  readonly afterFrame: () => void
}

export interface Framing {
  readonly receive: (input: string | Uint8Array) => Effect.Effect<void>
  /** Sends one message as JSON while the session is open. */
  readonly send: (message: unknown) => void
  /** Stops handling frames (the one in progress is interrupted) and drops the queue. */
  readonly stop: Effect.Effect<void>
}

const callsOf = (frame: RpcFrame): ReadonlyArray<RpcEntry> =>
  frame._tag === "Single" ? [frame.entry] : frame._tag === "Batch" ? frame.entries : []

const notUtf8: RpcFrame = { _tag: "Rejected", error: { code: RpcCode.parseError, message: "Parse error" } }

interface Queued {
  readonly frame: RpcFrame
  readonly bytes: number
  readonly receivedAt: number
}

export const startFraming = (options: FramingOptions): Effect.Effect<Framing> =>
  Effect.gen(function* () {
    const { transport, isOpen } = options
    let pendingBytes = 0
    const inbox = yield* Queue.unbounded<Queued>()

    const send = (message: unknown) => {
      if (!isOpen()) return
      let text: string
      try {
        text = JSON.stringify(message)
      } catch {
        text = JSON.stringify(errorReply(null, undefined, rpcErrorOf(apiError("internalError"))))
      }
      transport.send(text)
    }

    const handleFrame = ({ frame, receivedAt }: Queued) =>
      Effect.gen(function* () {
        if (frame._tag === "Rejected") return send(errorReply(null, undefined, frame.error))
        const replies: Array<RpcReply> = []
        for (const entry of callsOf(frame)) {
          if (!isOpen()) return
          const reply =
            entry._tag === "Invalid"
              ? errorReply(entry.id, entry.method, entry.error)
              : yield* options.reply(entry, receivedAt)
          if (reply !== undefined) replies.push(reply)
        }
        if (!isOpen()) return
        // JSON-RPC: a batch of notifications only gets no reply at all, never an empty array.
        if (frame._tag === "Single") {
          if (replies[0] !== undefined) send(replies[0])
        } else if (replies.length > 0) send(replies)
        options.afterFrame()
      })

    const processor = yield* Effect.forkDaemon(
      Effect.forever(
        Effect.flatMap(Queue.take(inbox), (queued) =>
          handleFrame(queued).pipe(Effect.ensuring(Effect.sync(() => (pendingBytes -= queued.bytes))))
        )
      )
    )

    const receive = (input: string | Uint8Array) =>
      Effect.gen(function* () {
        if (!isOpen()) return
        const text = typeof input === "string" ? input : decodeUtf8(input)
        const frame = text === undefined ? notUtf8 : parseFrame(text, options.maxBatch)
        const receivedAt = yield* Clock.currentTimeMillis
        // A heartbeat counts when it arrives, even if calls queued before it are still running.
        if (callsOf(frame).some((entry) => entry._tag === "Call" && entry.method === "heartbeat")) {
          options.onHeartbeat(receivedAt)
        }
        const bytes = text?.length ?? input.length
        if (pendingBytes + bytes > options.maxPendingBytes) {
          return options.terminate(CloseCode.policyViolation, "too many pending requests")
        }
        pendingBytes += bytes
        yield* Queue.offer(inbox, { frame, bytes, receivedAt })
      })

    const stop = Effect.zipRight(Fiber.interrupt(processor), Queue.shutdown(inbox))

    return { receive, send, stop } satisfies Framing
  })
