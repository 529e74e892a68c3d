import { NodeRuntime } from "@effect/platform-node"
import { makeDatabaseLayer, UserAccountsLive } from "@rfq/engine"
import { Data, Effect, Either, Layer, Option } from "effect"
import type { AdminCommand } from "./AdminCommands.js"
import { changesCaches, executeAdmin } from "./AdminExecute.js"
import { adminSocketPath } from "./AdminProtocol.js"
import { askHost } from "./AdminSocketClient.js"
import { type HostConfig, loadHostConfig } from "../Config.js"
import { acquireDataDirLock } from "../DataDirLock.js"
import { databaseLayerConfig } from "../DatabasePlace.js"
import { resolveSecrets } from "../Secrets.js"
import { announceChange } from "../shared/AdminNotice.js"

/**
 * What `npm run admin` does once its arguments parsed into a command (the entry, `admin.ts`, answers
 * help and wrong arguments before importing this, so they need neither the engine nor the host).
 */
class Failed extends Data.TaggedError("Failed")<{ readonly message: string }> {}

const direct = (command: AdminCommand, config: HostConfig) =>
  executeAdmin(command, { encryptionKeys: Effect.map(resolveSecrets(config), (s) => s.encryptionKeys) }).pipe(
    Effect.provide(Layer.provideMerge(UserAccountsLive, makeDatabaseLayer(databaseLayerConfig(config))))
  )

const throughHost = (config: HostConfig, args: ReadonlyArray<string>, locked: string) =>
  askHost(config.dataDir, args).pipe(
    Effect.mapError(
      (unreachable) =>
        new Failed({
          message: unreachable.sent
            ? unreachable.message
            : `${locked}, and nothing answers on ${adminSocketPath(config.dataDir)} (${unreachable.message}): a host still starting, or another npm run admin; try again in a moment`
        })
    ),
    Effect.flatMap((answer) =>
      answer.ok ? Effect.succeed(answer.output) : Effect.fail(new Failed({ message: answer.error }))
    )
  )

const run = (args: ReadonlyArray<string>, command: AdminCommand) =>
  Effect.gen(function* () {
    const config = yield* loadHostConfig
    if (config.database.kind === "pglite") {
      const lock = yield* Effect.either(acquireDataDirLock(config.dataDir))
      if (Either.isLeft(lock)) {
        if (lock.left._tag === "DataDirLockFailed") return yield* Effect.fail(lock.left)
        return yield* throughHost(config, args, lock.left.message)
      }
    }
    const output = yield* direct(command, config)
    // Several hosts: they drop their account caches now (see `shared/AdminNotice.ts`).
    if (Option.isSome(config.cluster) && changesCaches(command)) {
      const warning = yield* announceChange(config.cluster.value)
      if (warning !== undefined) process.stderr.write(`${warning}\n`)
    }
    return output
  }).pipe(Effect.scoped)

/** Runs the command with the host's environment; prints its output, or its error and exits 1. */
export const runAdminCommand = (args: ReadonlyArray<string>, command: AdminCommand): void => {
  const program = run(args, command).pipe(
    Effect.flatMap((output) => Effect.sync(() => process.stdout.write(`${output}\n`))),
    Effect.tapError((error) => Effect.sync(() => process.stderr.write(`${error.message}\n`)))
  )
  NodeRuntime.runMain(program, { disableErrorReporting: true, disablePrettyLogger: true })
}
