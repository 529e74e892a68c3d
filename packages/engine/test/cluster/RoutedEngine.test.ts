import {
  MessageStorage,
  RunnerHealth,
  Runners,
  RunnerStorage,
  Sharding,
  ShardingConfig
} from "@effect/cluster"
import { assert, describe, it } from "@effect/vitest"
import { Cause, Context, Deferred, Duration, Effect, Exit, Fiber, Layer, Option } from "effect"
import { decodeRequest } from "../../src/api/Decode.js"
import { CreateRfqRequest } from "../../src/api/RfqRequests.js"
import { OWNER_STOPPED, RoutedEngineLive } from "../../src/cluster/RoutedEngine.js"
import { ApiError } from "../../src/domain/Errors.js"
import { Engine, type EngineService } from "../../src/engine/Engine.js"
import { Ownership } from "../../src/engine/Ownership.js"
import { sharedOwnerEngine } from "../support/engineHarness.js"

/**
 * The routed engine (`cluster/RoutedEngine.ts`) over an in-memory cluster of one runner whose
 * ownership check always says "elsewhere", so every call travels as a message to the RFQ's entity
 * and back. The runner's shard lock storage can be made to fail: the cluster then marks its locks
 * unhealthy and stops every entity at once (what a refresh slower than its interval does to a busy
 * host), which is how a forwarded command was once cut and answered 503 "the server is shutting
 * down" whatever it had committed.
 */

const clusterWith = (outage: { on: boolean }) =>
  Sharding.layer.pipe(
    Layer.provideMerge(Runners.layerNoop),
    Layer.provideMerge(MessageStorage.layerMemory),
    Layer.provide([
      Layer.effect(
        RunnerStorage.RunnerStorage,
        Effect.map(RunnerStorage.makeMemory, (storage) =>
          RunnerStorage.RunnerStorage.of({
            ...storage,
            refresh: (address, shardIds) =>
              outage.on
                ? Effect.die(new Error("shard locks unreachable"))
                : storage.refresh(address, shardIds)
          })
        )
      ),
      RunnerHealth.layerNoop
    ]),
    Layer.provide(
      ShardingConfig.layer({
        shardLockRefreshInterval: Duration.millis(100),
        entityMessagePollInterval: Duration.millis(100),
        refreshAssignmentsInterval: Duration.millis(100)
      })
    )
  )

/**
 * A seeded engine on PGlite (`local`) and the routed engine over `wrap(local)`, which is what the
 * entity's handlers call; `outage` switches the shard lock failure on and off.
 */
const routedOver = (wrap: (local: EngineService) => EngineService) =>
  Effect.gen(function* () {
    const { context: localContext, callers } = yield* sharedOwnerEngine
    const local = Context.get(localContext, Engine)
    const outage = { on: false }
    const routedContext = yield* Layer.build(
      RoutedEngineLive.pipe(
        Layer.provide(Layer.succeed(Engine, wrap(local))),
        Layer.provide(Layer.succeed(Ownership, { owns: () => false, shared: true })),
        Layer.provide(Layer.succeedContext(localContext)),
        Layer.provide(clusterWith(outage))
      )
    )
    const request = yield* decodeRequest(CreateRfqRequest, {
      baseCurrency: "BTC",
      amount: 100,
      anonymous: false,
      settlementOptions: ["DBT"],
      settlementAccounts: {
        DBT: [{ credentialsId: callers.credentials["taker:dbt-main"], percentage: 100 }]
      },
      makers: { DBT: ["maker-1"] },
      legs: [{ direction: "buy", instrumentName: "BTC-27DEC30-90000-C", ratio: 1 }]
    })
    return { local, routed: Context.get(routedContext, Engine), outage, taker: callers.taker, request }
  })

/** A create that signals when the owner starts it and waits at a gate before running it. */
const gatedCreate = Effect.gen(function* () {
  const entered = yield* Deferred.make<void>()
  const gate = yield* Deferred.make<void>()
  const wrap = (local: EngineService): EngineService => ({
    ...local,
    createRfq: (caller, req, options) =>
      Deferred.succeed(entered, undefined).pipe(
        Effect.zipRight(Deferred.await(gate)),
        Effect.zipRight(local.createRfq(caller, req, options))
      )
  })
  return { entered, gate, wrap }
})

describe("RoutedEngine: a forwarded command and the owner's entity stopping", () => {
  it.scopedLive(
    "a shard lock outage mid-command: the caller gets the command's own answer, which storage holds",
    () =>
      Effect.gen(function* () {
        const { entered, gate, wrap } = yield* gatedCreate
        const { local, routed, outage, taker, request } = yield* routedOver(wrap)
        const call = yield* Effect.fork(routed.createRfq(taker, request))
        yield* Deferred.await(entered)
        // Several unhealthy rounds (every 100 ms), each stopping the runner's entities, the create's among them.
        outage.on = true
        yield* Effect.sleep(Duration.millis(500))
        outage.on = false
        yield* Deferred.succeed(gate, undefined)
        const exit = yield* Fiber.await(call)
        assert.isTrue(
          Exit.isSuccess(exit),
          `the create answered ${Exit.isFailure(exit) ? Cause.pretty(exit.cause) : ""}`
        )
        const { rfqId } = (exit as Exit.Success<{ rfqId: number }, never>).value
        const stored = (yield* local.getRfq(taker, rfqId)) as { rfqId: number; status: string }
        assert.deepStrictEqual([stored.rfqId, stored.status], [rfqId, "open"])
      })
  )

  it.scopedLive(
    "an interruption the owner sends back is a 503 service unavailable, not the request's own interruption",
    () =>
      Effect.gen(function* () {
        const { routed, taker, request } = yield* routedOver((local) => ({
          ...local,
          createRfq: () => Effect.interrupt
        }))
        const exit = yield* Effect.exit(routed.createRfq(taker, request))
        assert.isTrue(Exit.isFailure(exit))
        const failure = Exit.isFailure(exit) ? Cause.failureOption(exit.cause) : Option.none()
        assert.isTrue(Option.isSome(failure) && failure.value instanceof ApiError)
        assert.deepStrictEqual(
          Option.map(failure, (e) => [
            (e as ApiError).status,
            (e as ApiError).message,
            (e as ApiError).reason
          ]),
          Option.some([503, "service unavailable", [OWNER_STOPPED]])
        )
      })
  )

  it.scopedLive("the caller's own interruption still interrupts the forwarded call", () =>
    Effect.gen(function* () {
      const { entered, gate, wrap } = yield* gatedCreate
      const { routed, taker, request } = yield* routedOver(wrap)
      const call = yield* Effect.fork(routed.createRfq(taker, request))
      yield* Deferred.await(entered)
      const exit = yield* Fiber.interrupt(call)
      yield* Deferred.succeed(gate, undefined)
      assert.isTrue(Exit.isInterrupted(exit))
    })
  )
})
