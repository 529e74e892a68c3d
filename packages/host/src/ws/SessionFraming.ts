import { apiError } from "@rfq/engine"
import { Effect, Exit, Fiber, Runtime } from "effect"
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
import type { ReplyNow } from "./SessionMethods.js"

/**
 * The session's framing and back-pressure. A frame is decoded and parsed as it arrives (so a
 * transport may pass a view of a buffer it reuses), then handled: frames one at a time, in order,
 * the calls of a batch in order. A client whose unanswered frames pass `maxPendingBytes` of text
 * is cut off (1008). The replies of a batch go out as one array, a single call's alone;
 * notifications get none. (Output back-pressure is the transport's: see `WebSocketEndpoint.ts`.)
 *
 * No fiber where none is needed: a call whose reply is known at once (a heartbeat, a refusal, a
 * session method) is answered in the transport's callback itself, and only a call that runs an
 * Effect (an engine call) gets a fiber of its own; the frames behind it wait for it in a plain
 * queue, and the first of them goes on from the fiber's end.
 */
export interface FramingOptions {
  readonly transport: SessionTransport
  readonly maxBatch: number
  readonly maxPendingBytes: number
  readonly isOpen: () => boolean
  readonly terminate: (code: number, reason: string) => void
  /** A frame holding a heartbeat arrived at `receivedAt`. */
  readonly onHeartbeat: (receivedAt: number) => void
  /**
   * The reply to one call, at once or as the Effect that makes it (`undefined`: a notification, or
   * the session ends instead). Never throws.
   */
  readonly reply: (call: RpcCall, receivedAt: number) => ReplyNow
  /** Runs after a frame's replies went out. */
  readonly afterFrame: () => void
}

export interface Framing {
  /** A frame from the client, handled in order (see `Session.receiveNow`). */
  readonly receiveNow: (input: string | Uint8Array) => void
  readonly receive: (input: string | Uint8Array) => Effect.Effect<void>
  /** Sends one message as JSON while the session is open. */
  readonly send: (message: unknown) => void
  /** Stops handling frames (the call in progress is interrupted, and waited for) and drops the queue. */
  readonly stop: Effect.Effect<void>
}

const callsOf = (frame: RpcFrame): ReadonlyArray<RpcEntry> =>
  frame._tag === "Single" ? [frame.entry] : frame._tag === "Batch" ? frame.entries : []

const notUtf8: RpcFrame = { _tag: "Rejected", error: { code: RpcCode.parseError, message: "Parse error" } }

interface Queued {
  readonly frame: RpcFrame
  /** The frame's calls (`callsOf`), found once. */
  readonly entries: ReadonlyArray<RpcEntry>
  readonly bytes: number
  readonly receivedAt: number
}

/** A frame being handled: its calls answered so far, and the next one to answer. */
interface InProgress {
  readonly queued: Queued
  readonly entries: ReadonlyArray<RpcEntry>
  readonly replies: Array<RpcReply>
  next: number
  /** A call of it was interrupted: the frame ends without a reply. */
  dropped: boolean
}

export const startFraming = (options: FramingOptions): Effect.Effect<Framing> =>
  Effect.gen(function* () {
    const { transport, isOpen } = options
    // The calls' fibers run on the runtime the session was made on (its services, logger, clock).
    const runFork = Runtime.runFork(yield* Effect.runtime<never>())
    const clock = yield* Effect.clock
    let pendingBytes = 0
    const inbox: Array<Queued> = []
    /** The frame being handled, while a call of it waits for its fiber. */
    let waiting: InProgress | undefined
    let running: Fiber.RuntimeFiber<RpcReply | undefined> | undefined
    /** Inside `drain`: a fiber's end only resumes the frame, the loop goes on with the queue. */
    let draining = false
    let stopped = false

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

    const finish = (frame: InProgress) => {
      pendingBytes -= frame.queued.bytes
      if (!isOpen() || frame.dropped) return
      // JSON-RPC: a batch of notifications only gets no reply at all, never an empty array.
      if (frame.queued.frame._tag === "Single") {
        if (frame.replies[0] !== undefined) send(frame.replies[0])
      } else if (frame.replies.length > 0) send(frame.replies)
      options.afterFrame()
    }

    /** A call's fiber ended (the reply's Effect fails only when interrupted: the session is ending). */
    const ended = (frame: InProgress, exit: Exit.Exit<RpcReply | undefined>) => {
      if (Exit.isFailure(exit)) frame.dropped = true
      else if (exit.value !== undefined) frame.replies.push(exit.value)
    }

    /**
     * Answers the frame's calls from `frame.next` on; false when one of them waits for its fiber
     * (the fiber's end resumes the frame).
     */
    const advance = (frame: InProgress): boolean => {
      const { entries, replies, queued } = frame
      while (frame.next < entries.length && !frame.dropped) {
        if (!isOpen()) return true
        const entry = entries[frame.next++]!
        if (entry._tag === "Invalid") {
          replies.push(errorReply(entry.id, entry.method, entry.error))
          continue
        }
        const reply = options.reply(entry, queued.receivedAt)
        if (!Effect.isEffect(reply)) {
          if (reply !== undefined) replies.push(reply)
          continue
        }
        const fiber = runFork(reply)
        // A fiber that needed no wait is over already: its reply is taken here, in order.
        const exit = fiber.unsafePoll()
        if (exit !== null) {
          ended(frame, exit)
          continue
        }
        waiting = frame
        running = fiber
        fiber.addObserver((exit) => resume(fiber, exit))
        return false
      }
      return true
    }

    /** Handles queued frames in order until the queue is empty or a call waits for its fiber. */
    const drain = () => {
      if (draining) return
      draining = true
      try {
        while (!stopped && waiting === undefined && inbox.length > 0) {
          const queued = inbox.shift()!
          const { frame } = queued
          if (frame._tag === "Rejected") {
            pendingBytes -= queued.bytes
            send(errorReply(null, undefined, frame.error))
            continue
          }
          const inProgress: InProgress = {
            queued,
            entries: queued.entries,
            replies: [],
            next: 0,
            dropped: false
          }
          if (advance(inProgress)) finish(inProgress)
        }
      } finally {
        draining = false
      }
    }

    /** A call's fiber ended: its reply joins the frame's, the frame goes on, then the queue. */
    const resume = (
      fiber: Fiber.RuntimeFiber<RpcReply | undefined>,
      exit: Exit.Exit<RpcReply | undefined>
    ) => {
      const frame = waiting
      if (running !== fiber || frame === undefined) return
      waiting = undefined
      running = undefined
      if (stopped) return
      try {
        ended(frame, exit)
        if (!advance(frame)) return
        finish(frame)
        drain()
      } catch (error) {
        // Called by the fiber's end, outside any callback that would catch it: the session ends.
        runFork(Effect.logError("WebSocket session failed", error))
        options.terminate(1011, "internal error")
      }
    }

    const receiveNow = (input: string | Uint8Array): void => {
      if (!isOpen() || stopped) return
      const text = typeof input === "string" ? input : decodeUtf8(input)
      const frame = text === undefined ? notUtf8 : parseFrame(text, options.maxBatch)
      const receivedAt = clock.unsafeCurrentTimeMillis()
      // A heartbeat counts when it arrives, even if calls queued before it are still running.
      const entries = callsOf(frame)
      if (entries.some((entry) => entry._tag === "Call" && entry.method === "heartbeat")) {
        options.onHeartbeat(receivedAt)
      }
      const bytes = text?.length ?? input.length
      if (pendingBytes + bytes > options.maxPendingBytes) {
        options.terminate(CloseCode.policyViolation, "too many pending requests")
        return
      }
      pendingBytes += bytes
      inbox.push({ frame, entries, bytes, receivedAt })
      drain()
    }

    const stop = Effect.suspend(() => {
      stopped = true
      inbox.length = 0
      const fiber = running
      return fiber === undefined ? Effect.void : Fiber.interrupt(fiber)
    }).pipe(Effect.asVoid)

    return {
      receiveNow,
      receive: (input) => Effect.sync(() => receiveNow(input)),
      send,
      stop
    } satisfies Framing
  })
