import { NodeRuntime } from "@effect/platform-node"
import { makeDatabaseLayer, UserAccountsLive } from "@rfq/engine"
import { Data, Effect, Either, Layer, Option } from "effect"
import type { AdminCommand } from "./admin/AdminCommands.js"
import { parseAdmin } from "./admin/AdminParse.js"
import { changesCaches, executeAdmin } from "./admin/AdminExecute.js"
import { adminSocketPath } from "./admin/AdminProtocol.js"
import { askHost } from "./admin/AdminSocketClient.js"
import { type HostConfig, loadHostConfig } from "./Config.js"
import { acquireDataDirLock } from "./DataDirLock.js"
import { databaseLayerConfig } from "./Host.js"
import { resolveSecrets } from "./Secrets.js"
import { announceChange } from "./shared/AdminNotice.js"

/**
 * `npm run admin -- <command>`: provisioning (the commands and their help: `admin/AdminCommands.ts`,
 * what they do: `admin/AdminExecute.ts`). Help and wrong arguments are answered before anything is
 * opened. Then, with the host's environment:
 * - embedded database, no host running: the data directory is locked and opened here;
 * - embedded database held by a running host: the command goes to the host over its admin socket
 *   (`admin/AdminSocketServer.ts`) and takes effect there at once;
 * - PostgreSQL: opened here (several processes may); running hosts see the change within their
 *   caches' 5 s (open sessions within their 1 s recheck), or at once when told over Redis
 *   (several hosts, `shared/AdminNotice.ts`).
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

const args = process.argv.slice(2)
const parsed = parseAdmin(args)
if (parsed._tag === "Help") process.stdout.write(`${parsed.text}\n`)
else if (parsed._tag === "Wrong") {
  process.stderr.write(`${parsed.message}\n`)
  process.exitCode = 1
} else {
  const program = run(args, parsed.command).pipe(
    Effect.flatMap((output) => Effect.sync(() => process.stdout.write(`${output}\n`))),
    Effect.tapError((error) => Effect.sync(() => process.stderr.write(`${error.message}\n`)))
  )
  NodeRuntime.runMain(program, { disableErrorReporting: true, disablePrettyLogger: true })
}
