import { AccountStore } from "@rfq/engine"
import { Effect, Option, Runtime, type Scope } from "effect"
import { SharedState } from "./SharedState.js"

/**
 * Multi-host mode: when the shared invalidation says everything is stale (the admin command's
 * notice after provisioning, `AdminNotice.ts#announceChange`, or a host whose notices were lost),
 * this host also drops the engine's cached reference data (makers, credentials), not only its
 * cached account standing (`AuthService.ts`). Every host hears the notice, so each forgets only
 * its own cache. Without it a new maker would wait for the caches' 5 s on the other hosts.
 */
export const forgetReferenceDataWhenStale: Effect.Effect<void, never, AccountStore | Scope.Scope> =
  Effect.gen(function* () {
    const shared = yield* Effect.serviceOption(SharedState)
    if (Option.isNone(shared)) return
    const store = yield* AccountStore
    const run = Runtime.runSync(yield* Effect.runtime<never>())
    yield* shared.value.invalidation.listen((notice) => {
      if (notice._tag === "EverythingStale") run(store.forgetReferenceData)
    })
  })
