import { NodeRuntime } from "@effect/platform-node"
import {
  makeDatabaseLayer,
  makeSecretBox,
  Provisioning,
  rotateCredentialsKey,
  UserAccounts,
  UserAccountsLive
} from "@rfq/engine"
import { Data, Effect, Layer, Option, Redacted } from "effect"
import { hashSecret } from "./auth/SecretHash.js"
import { type HostConfig, loadHostConfig } from "./Config.js"
import { acquireDataDirLock } from "./DataDirLock.js"
import { databaseLayerConfig } from "./Host.js"
import { resolveSecrets } from "./Secrets.js"
import { announceChange } from "./shared/AdminNotice.js"

/**
 * `npm run admin -- <command>`: provisioning outside demo mode. It opens the same database as the
 * host (same environment variables); in embedded mode it takes the data-directory lock, so stop
 * the host first. The writes are the engine's (`Provisioning`, `UserAccounts`); here the command
 * line is read and the answers printed.
 *
 *   desk create <name>
 *   desk list
 *   user create <desk> <name> <trader|viewer>
 *   client create <userId>                 prints the new clientId and secret (shown once)
 *   client deactivate <clientId>
 *   maker create <desk> <makerId>
 *   counterparty add <desk> <counterparty desk> [--no-block-trade]
 *   credentials rotate-key                 re-encrypts every stored exchange-credentials secret under
 *                                          the highest version of the key ring (ENCRYPTION_KEYS);
 *                                          prints how many rows it rewrote; a second run rewrites 0
 */
class Usage extends Data.TaggedError("Usage")<{ readonly message: string }> {}
class Refused extends Data.TaggedError("Refused")<{ readonly message: string }> {}

const usage = `usage: npm run admin -- <command>
  desk create <name> | desk list
  user create <desk> <name> <trader|viewer>
  client create <userId> | client deactivate <clientId>
  maker create <desk> <makerId>
  counterparty add <desk> <counterparty desk> [--no-block-trade]
  credentials rotate-key`

const deskId = (name: string) =>
  Effect.flatMap(
    Provisioning.deskIdByName(name),
    Option.match({
      onNone: () => Effect.fail(new Usage({ message: `desk not found: ${name}` })),
      onSome: Effect.succeed
    })
  )

/**
 * Every sealed credentials secret opened with the whole ring and sealed again under its highest
 * version, in one transaction: all rows or none (a row no key of the ring opens stops it, named).
 */
const rotateKey = (config: HostConfig) =>
  Effect.gen(function* () {
    const secrets = yield* resolveSecrets(config)
    const ring = makeSecretBox(Redacted.value(secrets.encryptionKeys))
    const result = yield* rotateCredentialsKey(ring, ring).pipe(
      Effect.catchTag("RotationRefused", (refused) =>
        Effect.fail(
          new Refused({
            message: `credentials ${refused.credentialsId} cannot be re-encrypted (${refused.reason}); nothing was rewritten — is the key it was sealed with in ENCRYPTION_KEYS?`
          })
        )
      )
    )
    return `${result.rotated} credential secrets re-encrypted under key version ${ring.currentVersion} (${result.alreadyCurrent} already under it)`
  })

const run = (args: ReadonlyArray<string>, config: HostConfig) =>
  Effect.gen(function* () {
    const accounts = yield* UserAccounts
    const [noun, verb, ...rest] = args
    switch (`${noun} ${verb}`) {
      case "desk create": {
        const [name] = rest
        if (!name) break
        return `desk ${yield* Provisioning.createDesk(name)} created: ${name}`
      }
      case "desk list": {
        const rows = yield* Provisioning.listDesks
        return rows
          .map((r) => `${r.id}\t${r.name}${r.makerId === null ? "" : `\tmaker ${r.makerId}`}`)
          .join("\n")
      }
      case "user create": {
        const [desk, name, role] = rest
        if (!desk || !name || (role !== "trader" && role !== "viewer")) break
        const userId = yield* accounts.createUser(yield* deskId(desk), name, role)
        return `user ${userId} created: ${name} (${role}) on ${desk}`
      }
      case "client create": {
        const userId = Number(rest[0])
        if (!Number.isSafeInteger(userId) || userId <= 0) break
        const { clientId, clientSecret } = yield* accounts.createClient(userId, (secret) =>
          hashSecret(secret)
        )
        return `clientId: ${clientId}\nclientSecret: ${clientSecret}\n(the secret is shown once; only its hash is stored)`
      }
      case "client deactivate": {
        const [clientId] = rest
        if (!clientId) break
        return (yield* accounts.deactivateClient(clientId))
          ? `client ${clientId} deactivated`
          : `no such client: ${clientId}`
      }
      case "maker create": {
        const [desk, makerId] = rest
        if (!desk || !makerId) break
        yield* Provisioning.createMaker(yield* deskId(desk), makerId, desk)
        return `maker ${makerId} created for ${desk}`
      }
      case "counterparty add": {
        const [desk, other, flag] = rest
        if (!desk || !other) break
        const a = yield* deskId(desk)
        const b = yield* deskId(other)
        yield* Provisioning.addCounterparty(a, b, flag !== "--no-block-trade")
        return `${other} is now a counterparty of ${desk}`
      }
      case "credentials rotate-key": {
        if (rest.length > 0) break
        return yield* rotateKey(config)
      }
    }
    return yield* Effect.fail(new Usage({ message: usage }))
  })

/** The commands whose change running hosts may hold in a cache. */
const CHANGES_ACCOUNTS = new Set(["client deactivate", "maker create", "counterparty add"])

const program = Effect.gen(function* () {
  const config = yield* loadHostConfig
  if (config.database.kind === "pglite") yield* acquireDataDirLock(config.dataDir)
  const args = process.argv.slice(2)
  const output = yield* run(args, config).pipe(
    Effect.provide(Layer.provideMerge(UserAccountsLive, makeDatabaseLayer(databaseLayerConfig(config))))
  )
  process.stdout.write(`${output}\n`)
  // Several hosts: they drop their account caches now (see `shared/AdminNotice.ts`).
  if (Option.isSome(config.cluster) && CHANGES_ACCOUNTS.has(`${args[0]} ${args[1]}`)) {
    const warning = yield* announceChange(config.cluster.value)
    if (warning !== undefined) process.stderr.write(`${warning}\n`)
  }
}).pipe(
  Effect.scoped,
  Effect.tapError((error) =>
    Effect.sync(() => {
      process.stderr.write(
        `${error instanceof Error || typeof error === "object" ? ((error as { message?: string }).message ?? String(error)) : String(error)}\n`
      )
    })
  )
)

NodeRuntime.runMain(program, { disableErrorReporting: true, disablePrettyLogger: true })
