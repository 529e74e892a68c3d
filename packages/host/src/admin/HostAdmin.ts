import type * as SqlClient from "@effect/sql/SqlClient"
import { AccountStore, makeUserAccounts, UserAccounts } from "@rfq/engine"
import { Cause, Effect, Option, Runtime, type Scope } from "effect"
import { Auth } from "../auth/AuthService.js"
import type { HostInput } from "../Host.js"
import { parseAdmin } from "./AdminParse.js"
import { changesCaches, executeAdmin } from "./AdminExecute.js"
import type { AdminAnswer } from "./AdminProtocol.js"
import { serveAdminSocket } from "./AdminSocketServer.js"

/**
 * Provisioning through a running host (embedded mode, one host): the commands of `npm run admin`
 * received on the admin socket and run on the host's own database, so that they need no second
 * process on the data directory. A change takes effect at once: after a deactivation, a new maker
 * or counterparty, or a key rotation, the host drops its cached account standing (the next request
 * or call of any token reads the database; idle WebSocket sessions are closed by the 1 s recheck)
 * and the engine's cached reference data. A new client needs nothing: logins read the database.
 * Each command is logged (its words, never its arguments) with its outcome.
 */
export const serveHostAdmin = (
  input: HostInput
): Effect.Effect<void, never, SqlClient.SqlClient | AccountStore | Auth | Scope.Scope> =>
  Effect.gen(function* () {
    // On PostgreSQL several processes may open the database: the admin command does so itself.
    if (input.config.database.kind !== "pglite" || Option.isSome(input.config.cluster)) return
    const accounts = yield* makeUserAccounts
    const store = yield* AccountStore
    const auth = yield* Auth
    const runtime = yield* Effect.runtime<SqlClient.SqlClient>()
    const env = { encryptionKeys: Effect.succeed(input.secrets.encryptionKeys) }

    const answer = (args: ReadonlyArray<string>): Effect.Effect<AdminAnswer, never, SqlClient.SqlClient> => {
      const parsed = parseAdmin(args)
      if (parsed._tag === "Help") return Effect.succeed({ ok: true, output: parsed.text })
      if (parsed._tag === "Wrong") return Effect.succeed({ ok: false, error: parsed.message })
      return executeAdmin(parsed.command, env).pipe(
        Effect.provideService(UserAccounts, accounts),
        Effect.tap(() =>
          changesCaches(parsed.command)
            ? Effect.zipRight(auth.forgetStanding, store.referenceDataChanged)
            : Effect.void
        ),
        Effect.map((output): AdminAnswer => ({ ok: true, output })),
        Effect.catchTag("AdminRefused", (refused) =>
          Effect.succeed<AdminAnswer>({ ok: false, error: refused.message })
        ),
        Effect.catchAllCause((cause) =>
          Effect.as(Effect.logError("admin command failed", cause), {
            ok: false,
            error: `the host failed to run the command: ${Cause.squash(cause)}`
          } as AdminAnswer)
        ),
        Effect.tap((result) =>
          Effect.logInfo("admin command").pipe(Effect.annotateLogs({ command: parsed.words, ok: result.ok }))
        )
      )
    }
    yield* serveAdminSocket({
      dataDir: input.config.dataDir,
      handle: (args) => Runtime.runPromise(runtime)(answer(args))
    })
  })
