import { assert, describe, it } from "@effect/vitest"
import { Deferred, Effect, Fiber, FiberId, Option, Queue } from "effect"
import fc from "fast-check"
import { errorReply, parseFrame, type RpcCall, type RpcReply, resultReply } from "../src/ws/JsonRpc.js"
import { type Framing, startFraming } from "../src/ws/SessionFraming.js"

/**
 * `startFraming` over a fake transport. The fake `reply` decides by method:
 * - `now`: the reply itself, at once;
 * - `ready`: an Effect that needs no wait (taken without waiting for its fiber);
 * - `soon`: an Effect that yields once, so its fiber ends on a later turn by itself;
 * - `later`: an Effect that waits for the gate of its `params.key`, opened by the test;
 * - `sticky`: as `later`, but not interruptible.
 * A call without an id (a notification) is answered `undefined`, as the session's methods do.
 * Every reply echoes the call's params, so a reply shows which call it answers.
 */
interface Harness {
  readonly framing: Framing
  /** What went out, each message parsed back. */
  readonly sent: Array<unknown>
  /** The next message out, waiting a bounded number of turns (a missing reply fails, never hangs). */
  readonly next: Effect.Effect<unknown>
  readonly terminated: Array<{ readonly code: number; readonly reason: string }>
  /** The keys of the calls `reply` was asked for, in order. */
  readonly asked: Array<string>
  /** The keys of the waiting calls that were interrupted. */
  readonly interrupted: Set<string>
  /** Opens the gate of a `later` or `sticky` call. */
  readonly open: (key: string) => Effect.Effect<void>
  /** How many frames ran `afterFrame`. */
  readonly framesDone: () => number
}

/** Turns of the scheduler a test waits for something to happen (a count, not a time). */
const MAX_TURNS = 10_000

const makeHarness = (maxPendingBytes = 1_000_000) =>
  Effect.gen(function* () {
    const sent: Array<unknown> = []
    const out = yield* Queue.unbounded<unknown>()
    const terminated: Array<{ code: number; reason: string }> = []
    const asked: Array<string> = []
    const interrupted = new Set<string>()
    const gates = new Map<string, Deferred.Deferred<void>>()
    const gate = (key: string) => {
      let known = gates.get(key)
      if (known === undefined) gates.set(key, (known = Deferred.unsafeMake<void>(FiberId.none)))
      return known
    }
    let isOpen = true
    let framesDone = 0
    const answer = (call: RpcCall): RpcReply | undefined =>
      call.id === undefined ? undefined : resultReply(call.id, call.method, call.params)
    const keyOf = (call: RpcCall) => (call.params as { readonly key: string }).key
    const framing = yield* startFraming({
      transport: {
        send: (frame) => {
          assert.isString(frame)
          const message: unknown = JSON.parse(frame as string)
          sent.push(message)
          Queue.unsafeOffer(out, message)
        },
        close: () => assert.fail("the framing never closes the transport itself")
      },
      maxBatch: 10,
      maxPendingBytes,
      isOpen: () => isOpen,
      terminate: (code, reason) => {
        terminated.push({ code, reason })
        isOpen = false
      },
      onHeartbeat: () => {},
      reply: (call) => {
        const key = keyOf(call)
        asked.push(key)
        const waited = Effect.as(Deferred.await(gate(key)), answer(call))
        switch (call.method) {
          case "now":
            return answer(call)
          case "ready":
            return Effect.succeed(answer(call))
          case "soon":
            return Effect.as(Effect.yieldNow(), answer(call))
          case "later":
            return Effect.onInterrupt(waited, () => Effect.sync(() => interrupted.add(key)))
          case "sticky":
            return Effect.uninterruptible(waited)
          default:
            return assert.fail(`unexpected method ${call.method}`)
        }
      },
      afterFrame: () => {
        framesDone++
      }
    })
    return {
      framing,
      sent,
      next: Effect.gen(function* () {
        for (let turn = 0; turn < MAX_TURNS; turn++) {
          const message = yield* Queue.poll(out)
          if (Option.isSome(message)) return message.value
          yield* Effect.yieldNow()
        }
        return assert.fail(`nothing sent within ${MAX_TURNS} turns`)
      }),
      terminated,
      asked,
      interrupted,
      open: (key) => Effect.asVoid(Deferred.succeed(gate(key), undefined)),
      framesDone: () => framesDone
    } satisfies Harness
  })

type Method = "now" | "ready" | "soon" | "later" | "sticky"

/** A call's text; no `id` makes it a notification. */
const call = (method: Method, key: string, id?: number) =>
  JSON.stringify({ jsonrpc: "2.0", ...(id === undefined ? {} : { id }), method, params: { key } })

/** The reply the fake gives a call with an id. */
const replyTo = (method: Method, key: string, id: number) => resultReply(id, method, { key })

const batch = (...calls: ReadonlyArray<string>) => `[${calls.join(",")}]`

/** Lets every fiber that can run do so (a bounded number of turns, not a time). */
const settle = Effect.repeatN(Effect.yieldNow(), 50)

describe("startFraming", () => {
  it.effect("a reply known at once goes out before receiveNow returns", () =>
    Effect.gen(function* () {
      const h = yield* makeHarness()
      h.framing.receiveNow(call("now", "a", 1))
      assert.deepStrictEqual(h.sent, [replyTo("now", "a", 1)])
      // An Effect that needs no wait is answered in the callback too.
      h.framing.receiveNow(call("ready", "b", 2))
      assert.deepStrictEqual(h.sent, [replyTo("now", "a", 1), replyTo("ready", "b", 2)])
    })
  )

  it.effect("replies go out in the order the frames arrived, behind a call that waits", () =>
    Effect.gen(function* () {
      const h = yield* makeHarness()
      h.framing.receiveNow(call("later", "a", 1))
      h.framing.receiveNow(call("now", "b", 2))
      h.framing.receiveNow(call("ready", "c", 3))
      h.framing.receiveNow("{ not json")
      h.framing.receiveNow(call("now", "d", 4))
      yield* settle
      assert.deepStrictEqual(h.sent, [], "nothing overtakes the waiting call")
      // The frames behind it are not even looked at yet.
      assert.deepStrictEqual(h.asked, ["a"])
      yield* h.open("a")
      const rejected = parseFrame("{ not json")
      assert.strictEqual(rejected._tag, "Rejected")
      const expected = [
        replyTo("later", "a", 1),
        replyTo("now", "b", 2),
        replyTo("ready", "c", 3),
        rejected._tag === "Rejected" ? errorReply(null, undefined, rejected.error) : undefined,
        replyTo("now", "d", 4)
      ]
      for (const message of expected) assert.deepStrictEqual(yield* h.next, message)
      yield* settle
      assert.deepStrictEqual(h.sent, expected)
      assert.deepStrictEqual(h.asked, ["a", "b", "c", "d"])
    })
  )

  it.effect("a batch's replies come out as one array in call order, whatever order its waits end in", () =>
    Effect.gen(function* () {
      const h = yield* makeHarness()
      const invalid = JSON.stringify({ jsonrpc: "1.0", id: 9, method: "now" })
      const text = batch(
        call("later", "a", 1),
        call("now", "b", 2),
        call("ready", "c", 3),
        call("later", "n1"),
        call("now", "n2"),
        invalid,
        call("later", "d", 4),
        call("now", "e", 5)
      )
      h.framing.receiveNow(text)
      h.framing.receiveNow(call("now", "after", 6))
      // The last wait of the batch ends first, the first one last.
      yield* h.open("d")
      yield* h.open("n1")
      yield* settle
      assert.deepStrictEqual(h.sent, [])
      yield* h.open("a")
      const parsed = parseFrame(text)
      assert.strictEqual(parsed._tag, "Batch")
      const invalidEntry = parsed._tag === "Batch" ? parsed.entries[5]! : undefined
      assert.strictEqual(invalidEntry?._tag, "Invalid")
      assert.deepStrictEqual(yield* h.next, [
        replyTo("later", "a", 1),
        replyTo("now", "b", 2),
        replyTo("ready", "c", 3),
        invalidEntry?._tag === "Invalid"
          ? errorReply(invalidEntry.id, invalidEntry.method, invalidEntry.error)
          : undefined,
        replyTo("later", "d", 4),
        replyTo("now", "e", 5)
      ])
      assert.deepStrictEqual(yield* h.next, replyTo("now", "after", 6))
      yield* settle
      assert.strictEqual(h.sent.length, 2)
    })
  )

  it.effect("notifications get no reply, and a batch of notifications gets nothing at all", () =>
    Effect.gen(function* () {
      const h = yield* makeHarness()
      h.framing.receiveNow(call("now", "n1"))
      h.framing.receiveNow(call("later", "n2"))
      h.framing.receiveNow(batch(call("now", "n3"), call("later", "n4"), call("ready", "n5")))
      yield* h.open("n2")
      yield* h.open("n4")
      h.framing.receiveNow(call("now", "a", 1))
      // The first thing out is the call's reply: nothing went out for the notifications before it.
      assert.deepStrictEqual(yield* h.next, replyTo("now", "a", 1))
      yield* settle
      assert.deepStrictEqual(h.sent, [replyTo("now", "a", 1)])
      assert.deepStrictEqual(h.asked, ["n1", "n2", "n3", "n4", "n5", "a"])
      assert.strictEqual(h.framesDone(), 4)
    })
  )

  it.effect("unanswered frames past maxPendingBytes end the session with 1008", () =>
    Effect.gen(function* () {
      const waiting = call("later", "a", 1)
      const quick = call("now", "b", 2)
      // Exactly full with both: the next frame is one too many.
      const h = yield* makeHarness(waiting.length + quick.length)
      h.framing.receiveNow(waiting)
      h.framing.receiveNow(quick)
      assert.deepStrictEqual(h.terminated, [])
      h.framing.receiveNow(call("now", "c", 3))
      assert.deepStrictEqual(h.terminated, [{ code: 1008, reason: "too many pending requests" }])
      yield* h.open("a")
      yield* settle
      assert.deepStrictEqual(h.asked, ["a"], "the frame past the limit is never handled")
      assert.deepStrictEqual(h.sent, [], "a terminated session sends nothing")
    })
  )

  it.effect("answered frames no longer count against maxPendingBytes", () =>
    Effect.gen(function* () {
      const waiting = call("later", "a", 1)
      const h = yield* makeHarness(waiting.length)
      // Frames answered at once each fill the allowance alone, and free it when answered.
      assert.strictEqual(call("now", "b", 100).length, waiting.length)
      for (let i = 0; i < 20; i++) h.framing.receiveNow(call("now", "b", 100 + i))
      // So do frames refused as a whole (answered with a parse error).
      const garbage = "{".padEnd(waiting.length, " ")
      for (let i = 0; i < 5; i++) h.framing.receiveNow(garbage)
      h.framing.receiveNow(waiting)
      yield* h.open("a")
      yield* settle
      assert.deepStrictEqual(h.terminated, [])
      assert.strictEqual(h.sent.length, 26)
      assert.deepStrictEqual(h.sent[25], replyTo("later", "a", 1))
      // Once the waiting frame was answered, one as large fits again, and then is the whole allowance.
      const another = call("later", "c", 3)
      assert.strictEqual(another.length, waiting.length)
      h.framing.receiveNow(another)
      assert.deepStrictEqual(h.terminated, [])
      h.framing.receiveNow(call("now", "x", 4))
      assert.deepStrictEqual(h.terminated, [{ code: 1008, reason: "too many pending requests" }])
      assert.deepStrictEqual(h.asked.slice(-2), ["a", "c"])
    })
  )

  it.effect("stop interrupts the waiting call, and nothing is sent after it", () =>
    Effect.gen(function* () {
      const h = yield* makeHarness()
      h.framing.receiveNow(call("later", "a", 1))
      h.framing.receiveNow(call("now", "b", 2))
      yield* h.framing.stop
      assert.deepStrictEqual([...h.interrupted], ["a"])
      yield* h.open("a")
      h.framing.receiveNow(call("now", "c", 3))
      yield* settle
      assert.deepStrictEqual(h.sent, [])
      assert.deepStrictEqual(h.asked, ["a"], "neither the queued frame nor a later one is handled")
    })
  )

  it.effect("a call that ends after stop (it could not be interrupted) sends nothing either", () =>
    Effect.gen(function* () {
      const h = yield* makeHarness()
      h.framing.receiveNow(call("sticky", "a", 1))
      h.framing.receiveNow(call("now", "b", 2))
      const stopping = yield* Effect.fork(h.framing.stop)
      yield* settle
      // stop waits for the call to end.
      assert.isNull(stopping.unsafePoll())
      yield* h.open("a")
      yield* Fiber.join(stopping)
      yield* settle
      assert.deepStrictEqual(h.sent, [])
      assert.deepStrictEqual(h.asked, ["a"])
    })
  )
})

/** One call of a generated frame. */
type CallSpec =
  | {
      readonly _tag: "call"
      readonly method: "now" | "ready" | "soon" | "later"
      readonly notification: boolean
    }
  | { readonly _tag: "invalid" }

type FrameSpec =
  | { readonly _tag: "single"; readonly call: CallSpec }
  | { readonly _tag: "batch"; readonly calls: ReadonlyArray<CallSpec> }
  | { readonly _tag: "garbage" }

const callSpec: fc.Arbitrary<CallSpec> = fc.oneof(
  {
    weight: 6,
    arbitrary: fc.record({
      _tag: fc.constant("call" as const),
      method: fc.constantFrom("now" as const, "ready" as const, "soon" as const, "later" as const),
      notification: fc.boolean()
    })
  },
  { weight: 1, arbitrary: fc.constant({ _tag: "invalid" as const }) }
)

const frameSpec: fc.Arbitrary<FrameSpec> = fc.oneof(
  { weight: 4, arbitrary: callSpec.map((c) => ({ _tag: "single" as const, call: c })) },
  {
    weight: 3,
    arbitrary: fc
      .array(callSpec, { minLength: 1, maxLength: 5 })
      .map((calls) => ({ _tag: "batch" as const, calls }))
  },
  { weight: 1, arbitrary: fc.constant({ _tag: "garbage" as const }) }
)

/**
 * Frames, and for each `later` call the step at which its gate opens (before the frame of that
 * position arrives; the last step is after all arrived) and how many turns the test yields after
 * each step, so that waits end before, during and after the frames behind them arrive.
 */
const scenario = fc.array(frameSpec, { minLength: 1, maxLength: 8 }).chain((frames) => {
  const later = frames
    .flatMap((f) => (f._tag === "single" ? [f.call] : f._tag === "batch" ? f.calls : []))
    .filter((c) => c._tag === "call" && c.method === "later").length
  return fc.record({
    frames: fc.constant(frames),
    opensAt: fc.array(fc.nat(frames.length), { minLength: later, maxLength: later }),
    turns: fc.array(fc.constantFrom(0, 1, 3), { minLength: frames.length + 1, maxLength: frames.length + 1 })
  })
})

interface Built {
  readonly text: string
  /** What the frame must answer; `undefined`: nothing. */
  readonly expected: unknown
  /** The keys of its `later` calls, in order. */
  readonly later: ReadonlyArray<string>
}

/** Each frame's text and expected answer; every call gets a key and id of its own. */
const build = (frames: ReadonlyArray<FrameSpec>): ReadonlyArray<Built> => {
  let n = 0
  return frames.map((frame): Built => {
    if (frame._tag === "garbage") {
      const text = `{"jsonrpc":"2.0","id":${++n},`
      const parsed = parseFrame(text)
      assert.strictEqual(parsed._tag, "Rejected")
      return {
        text,
        expected: parsed._tag === "Rejected" ? errorReply(null, undefined, parsed.error) : undefined,
        later: []
      }
    }
    const specs = frame._tag === "single" ? [frame.call] : frame.calls
    const later: Array<string> = []
    const parts = specs.map((spec) => {
      const id = ++n
      const key = `k${id}`
      if (spec._tag === "invalid") {
        const text = JSON.stringify({ jsonrpc: "1.0", id, method: "now", params: { key } })
        const entry = parseFrame(text)
        assert.isTrue(entry._tag === "Single" && entry.entry._tag === "Invalid")
        const reply =
          entry._tag === "Single" && entry.entry._tag === "Invalid"
            ? errorReply(entry.entry.id, entry.entry.method, entry.entry.error)
            : undefined
        return { text, reply }
      }
      if (spec.method === "later") later.push(key)
      return spec.notification
        ? { text: call(spec.method, key), reply: undefined }
        : { text: call(spec.method, key, id), reply: replyTo(spec.method, key, id) }
    })
    if (frame._tag === "single") return { text: parts[0]!.text, expected: parts[0]!.reply, later }
    const replies = parts.flatMap((p) => (p.reply === undefined ? [] : [p.reply]))
    return {
      text: batch(...parts.map((p) => p.text)),
      expected: replies.length === 0 ? undefined : replies,
      later
    }
  })
}

describe("startFraming, generated", () => {
  it.effect(
    "whatever the mix of frames and the order waits end in, the answers are the frames' in order",
    () =>
      Effect.promise(() =>
        fc.assert(
          fc.asyncProperty(scenario, ({ frames, opensAt, turns }) =>
            Effect.runPromise(
              Effect.gen(function* () {
                const h = yield* makeHarness()
                const built = build(frames)
                const laterKeys = built.flatMap((b) => b.later)
                for (let step = 0; step <= built.length; step++) {
                  for (let i = 0; i < laterKeys.length; i++)
                    if (opensAt[i] === step) yield* h.open(laterKeys[i]!)
                  if (step < built.length) h.framing.receiveNow(built[step]!.text)
                  for (let turn = 0; turn < turns[step]!; turn++) yield* Effect.yieldNow()
                }
                const handled = frames.filter((f) => f._tag !== "garbage").length
                for (let turn = 0; turn < MAX_TURNS && h.framesDone() < handled; turn++)
                  yield* Effect.yieldNow()
                yield* settle
                assert.strictEqual(h.framesDone(), handled, "every frame was handled")
                assert.deepStrictEqual(
                  h.sent,
                  built.flatMap((b) => (b.expected === undefined ? [] : [b.expected]))
                )
                assert.deepStrictEqual(h.terminated, [])
              })
            )
          ),
          { numRuns: 200 }
        )
      )
  )
})
