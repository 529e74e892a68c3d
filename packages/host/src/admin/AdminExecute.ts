import type * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import {
  makeSecretBox,
  Provisioning,
  rotateCredentialsKey,
  sqlState,
  uniqueViolation,
  UserAccounts,
  type UserListing
} from "@rfq/engine"
import { Data, Effect, Option, Redacted } from "effect"
import { hashSecret } from "../auth/SecretHash.js"
import type { EncryptionKeyRing } from "../ConfigVariables.js"
import { type AdminCommand, CREDENTIALS_HINT } from "./AdminCommands.js"
import { printable, quoted } from "./AdminText.js"

/**
 * What each admin command does, over the database in context: the same whether the admin process
 * opened the database itself or a running host received the command on its socket
 * (`AdminSocketServer.ts`). The writes are the engine's (`Provisioning`, `UserAccounts`); here the
 * answers are worded and the database's refusals (a taken name, an unknown user) turned into them.
 */

/** A command that could not be done, with the one line that says why. */
export class AdminRefused extends Data.TaggedError("AdminRefused")<{ readonly message: string }> {}

/** The commands after which running hosts must drop what they cached of accounts. */
export const changesCaches = (command: AdminCommand): boolean =>
  command._tag === "UserDeactivate" ||
  command._tag === "ClientDeactivate" ||
  command._tag === "MakerCreate" ||
  command._tag === "CounterpartyAdd" ||
  command._tag === "CredentialsRotateKey"

export interface AdminEnvironment {
  /** The key ring `credentials rotate-key` seals under (read only by that command). */
  readonly encryptionKeys: Effect.Effect<EncryptionKeyRing, { readonly message: string }>
}

const refuse = (message: string) => Effect.fail(new AdminRefused({ message }))

const deskId = (name: string) =>
  Effect.flatMap(
    Provisioning.deskIdByName(name),
    Option.match({ onNone: () => refuse(`desk not found: ${printable(name)}`), onSome: Effect.succeed })
  )

/** The database's refusal in the operator's words; anything unforeseen keeps the driver's message. */
const explain =
  (words: Partial<Record<string, string>>) =>
  (error: SqlError): Effect.Effect<never, AdminRefused> => {
    const taken = Option.flatMap(uniqueViolation(error), (constraint) =>
      Option.fromNullable(words[constraint])
    )
    if (Option.isSome(taken)) return refuse(taken.value)
    const state = Option.getOrUndefined(sqlState(error))
    const known = state === undefined ? undefined : words[state]
    if (known !== undefined) return refuse(known)
    const cause = error.cause instanceof Error ? `: ${error.cause.message}` : ""
    return refuse(`the database refused the change (${error.message}${cause})`)
  }

const userLine = (u: UserListing) =>
  [
    u.userId,
    printable(u.name),
    printable(u.desk),
    u.roles.join(","),
    u.active ? "active" : "inactive",
    u.clients.length === 0
      ? "-"
      : u.clients.map((c) => `${printable(c.clientId)} (${c.active ? "active" : "inactive"})`).join(", ")
  ].join("\t")

const rotateKey = (env: AdminEnvironment) =>
  Effect.gen(function* () {
    const keys = yield* env.encryptionKeys.pipe(
      Effect.mapError((e) => new AdminRefused({ message: e.message }))
    )
    const ring = makeSecretBox(Redacted.value(keys))
    const result = yield* rotateCredentialsKey(ring, ring).pipe(
      Effect.catchTag("RotationRefused", (refused) =>
        refuse(
          `credentials ${refused.credentialsId} cannot be re-encrypted (${refused.reason}); nothing was rewritten — is the key it was sealed with in ENCRYPTION_KEYS?`
        )
      ),
      Effect.catchTag("SqlError", explain({}))
    )
    return `${result.rotated} credential secrets re-encrypted under key version ${ring.currentVersion} (${result.alreadyCurrent} already under it)`
  })

/** Runs `command`; answers what to print. */
export const executeAdmin = (
  command: AdminCommand,
  env: AdminEnvironment
): Effect.Effect<string, AdminRefused, SqlClient.SqlClient | UserAccounts> =>
  Effect.gen(function* () {
    const accounts = yield* UserAccounts
    switch (command._tag) {
      case "DeskCreate": {
        const id = yield* Provisioning.createDesk(command.name).pipe(
          Effect.catchTag(
            "SqlError",
            explain({ desks_name_key: `a desk named ${quoted(command.name)} already exists` })
          )
        )
        return [
          `desk ${id} created: ${command.name}`,
          "next: user create <desk> <name> <trader|viewer>, then client create <userId>",
          CREDENTIALS_HINT
        ].join("\n")
      }
      case "DeskList": {
        const rows = yield* Provisioning.listDesks
        return [
          "id\tname\tmaker",
          ...rows.map((r) => `${r.id}\t${printable(r.name)}\t${printable(r.makerId ?? "-")}`)
        ].join("\n")
      }
      case "UserCreate": {
        const id = yield* deskId(command.desk)
        const userId = yield* accounts.createUser(id, command.name, command.role)
        return `user ${userId} created: ${command.name} (${command.role}) on ${command.desk}\nnext: client create ${userId}`
      }
      case "UserList": {
        const id = command.desk === undefined ? undefined : yield* deskId(command.desk)
        const users = yield* accounts.listUsers(id)
        return ["id\tname\tdesk\troles\tstanding\tclients", ...users.map(userLine)].join("\n")
      }
      case "UserDeactivate": {
        const found = yield* accounts.deactivateUser(command.userId)
        return found ? `user ${command.userId} deactivated` : yield* refuse(`no such user: ${command.userId}`)
      }
      case "ClientCreate": {
        const { clientId, clientSecret } = yield* accounts
          .createClient(command.userId, (secret) => hashSecret(secret))
          .pipe(Effect.catchTag("SqlError", explain({ "23503": `no such user: ${command.userId}` })))
        return `clientId: ${clientId}\nclientSecret: ${clientSecret}\n(the secret is shown once; only its hash is stored)`
      }
      case "ClientDeactivate": {
        const found = yield* accounts.deactivateClient(command.clientId)
        return found
          ? `client ${command.clientId} deactivated`
          : yield* refuse(`no such client: ${printable(command.clientId)}`)
      }
      case "MakerCreate": {
        const id = yield* deskId(command.desk)
        yield* Provisioning.createMaker(id, command.makerId, command.desk).pipe(
          Effect.catchTag(
            "SqlError",
            explain({
              makers_pkey: `maker id ${quoted(command.makerId)} is taken`,
              makers_desk_key: `desk ${quoted(command.desk)} already is a maker`
            })
          )
        )
        return `maker ${command.makerId} created for ${command.desk}`
      }
      case "CounterpartyAdd": {
        const a = yield* deskId(command.desk)
        const b = yield* deskId(command.counterparty)
        if (a === b) return yield* refuse("a desk cannot be its own counterparty")
        yield* Provisioning.addCounterparty(a, b, command.blockTrade)
        return `${command.counterparty} is now a counterparty of ${command.desk}${command.blockTrade ? "" : " (no block trades)"}`
      }
      case "CredentialsRotateKey":
        return yield* rotateKey(env)
    }
  }).pipe(Effect.catchTag("SqlError", explain({})))
