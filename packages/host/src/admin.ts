import { randomBytes } from "node:crypto"
import { NodeRuntime } from "@effect/platform-node"
import * as SqlClient from "@effect/sql/SqlClient"
import { makeDatabaseLayer, makeSecretBox, rotateCredentialsKey } from "@rfq/engine"
import { Clock, Data, Effect, Redacted } from "effect"
import { hashSecret } from "./auth/SecretHash.js"
import { type HostConfig, loadHostConfig } from "./Config.js"
import { acquireDataDirLock } from "./DataDirLock.js"
import { databaseLayerConfig } from "./Host.js"
import { resolveSecrets } from "./Secrets.js"

/**
 * `npm run admin -- <command>`: provisioning outside demo mode. It opens the same database as the
 * host (same environment variables); in embedded mode it takes the data-directory lock, so stop
 * the host first.
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
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const rows = yield* sql<{ id: number }>`SELECT id FROM desks WHERE name = ${name}`
    if (rows[0] === undefined) return yield* Effect.fail(new Usage({ message: `desk not found: ${name}` }))
    return Number(rows[0].id)
  })

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
    const sql = yield* SqlClient.SqlClient
    const now = yield* Clock.currentTimeMillis
    const [noun, verb, ...rest] = args
    switch (`${noun} ${verb}`) {
      case "desk create": {
        const [name] = rest
        if (!name) break
        const rows = yield* sql<{
          id: number
        }>`INSERT INTO desks (name, created_at) VALUES (${name}, ${now}) RETURNING id`
        return `desk ${rows[0]!.id} created: ${name}`
      }
      case "desk list": {
        const rows = yield* sql<{ id: number; name: string; makerId: string | null }>`
          SELECT d.id, d.name, m.maker_id AS "makerId" FROM desks d LEFT JOIN makers m ON m.desk_id = d.id ORDER BY d.id`
        return rows
          .map((r) => `${r.id}\t${r.name}${r.makerId === null ? "" : `\tmaker ${r.makerId}`}`)
          .join("\n")
      }
      case "user create": {
        const [desk, name, role] = rest
        if (!desk || !name || (role !== "trader" && role !== "viewer")) break
        const id = yield* deskId(desk)
        const rows = yield* sql<{ id: number }>`
          INSERT INTO users (desk_id, name, roles, created_at) VALUES (${id}, ${name}, ${[role]}, ${now}) RETURNING id`
        return `user ${rows[0]!.id} created: ${name} (${role}) on ${desk}`
      }
      case "client create": {
        const userId = Number(rest[0])
        if (!Number.isSafeInteger(userId) || userId <= 0) break
        const clientId = `client-${randomBytes(6).toString("hex")}`
        const secret = randomBytes(24).toString("base64url")
        const hash = yield* hashSecret(secret)
        yield* sql`INSERT INTO api_clients (client_id, secret_hash, user_id, created_at)
          VALUES (${clientId}, ${hash}, ${userId}, ${now})`
        return `clientId: ${clientId}\nclientSecret: ${secret}\n(the secret is shown once; only its hash is stored)`
      }
      case "client deactivate": {
        const [clientId] = rest
        if (!clientId) break
        const rows =
          yield* sql`UPDATE api_clients SET active = false WHERE client_id = ${clientId} RETURNING id`
        return rows.length === 0 ? `no such client: ${clientId}` : `client ${clientId} deactivated`
      }
      case "maker create": {
        const [desk, makerId] = rest
        if (!desk || !makerId) break
        const id = yield* deskId(desk)
        yield* sql`INSERT INTO makers (maker_id, desk_id, name, created_at) VALUES (${makerId}, ${id}, ${desk}, ${now})`
        return `maker ${makerId} created for ${desk}`
      }
      case "counterparty add": {
        const [desk, other, flag] = rest
        if (!desk || !other) break
        const a = yield* deskId(desk)
        const b = yield* deskId(other)
        yield* sql`INSERT INTO otc_counterparties (desk_id, counterparty_desk_id, allows_block_trade, created_at)
          VALUES (${a}, ${b}, ${flag !== "--no-block-trade"}, ${now})
          ON CONFLICT (desk_id, counterparty_desk_id) DO UPDATE SET allows_block_trade = EXCLUDED.allows_block_trade`
        return `${other} is now a counterparty of ${desk}`
      }
      case "credentials rotate-key": {
        if (rest.length > 0) break
        return yield* rotateKey(config)
      }
    }
    return yield* Effect.fail(new Usage({ message: usage }))
  })

const program = Effect.gen(function* () {
  const config = yield* loadHostConfig
  if (config.database.kind === "pglite") yield* acquireDataDirLock(config.dataDir)
  const output = yield* run(process.argv.slice(2), config).pipe(
    Effect.provide(makeDatabaseLayer(databaseLayerConfig(config)))
  )
  process.stdout.write(`${output}\n`)
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
