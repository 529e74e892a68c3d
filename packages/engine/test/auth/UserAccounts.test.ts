import { randomBytes } from "node:crypto"
import * as SqlClient from "@effect/sql/SqlClient"
import { assert, describe, layer } from "@effect/vitest"
import { Effect, Layer, Option } from "effect"
import * as Provisioning from "../../src/accounts/Provisioning.js"
import { UserAccountsLive } from "../../src/auth/SqlUserAccounts.js"
import { REFRESH_TOKEN_SECONDS, tokenExpiry } from "../../src/auth/TokenLifetimes.js"
import { UserAccounts } from "../../src/auth/UserAccounts.js"
import { testDatabaseTimeout, testDatabases } from "../support/TestDatabases.js"

/**
 * The engine's side of authentication on both databases: provisioning a user and a client, the
 * account a login reads, and refresh-token families (one-time use, a replay revoking the family).
 * The host's auth tests cover the same rules through the token endpoints.
 */

const unique = (prefix: string) => `${prefix}-${randomBytes(5).toString("hex")}`
const hashSecret = (secret: string) => Effect.succeed(`hashed:${secret}`)

/** A desk, a trader and an API client of theirs. */
const provision = Effect.gen(function* () {
  const accounts = yield* UserAccounts
  const deskName = unique("desk")
  const deskId = yield* Provisioning.createDesk(deskName)
  const userId = yield* accounts.createUser(deskId, unique("user"), "trader")
  const client = yield* accounts.createClient(userId, hashSecret)
  return { deskId, deskName, userId, ...client }
})

describe.each(testDatabases)("UserAccounts on $name", (db) => {
  layer(Layer.provideMerge(UserAccountsLive, db.layer), { timeout: testDatabaseTimeout })((it) => {
    it.effect("a provisioned client is found with its user, desk, role, maker id and hashed secret", () =>
      Effect.gen(function* () {
        const accounts = yield* UserAccounts
        const made = yield* provision
        assert.match(made.clientId, /^client-[0-9a-f]{12}$/)
        const makerId = unique("maker")
        yield* Provisioning.createMaker(made.deskId, makerId, made.deskName)
        const found = yield* accounts.clientAccount(made.clientId)
        assert.deepStrictEqual(
          found,
          Option.some({
            clientId: made.clientId,
            secretHash: `hashed:${made.clientSecret}`,
            clientActive: true,
            userId: made.userId,
            userActive: true,
            deskId: made.deskId,
            roles: ["trader"],
            makerId
          })
        )
        assert.deepStrictEqual(yield* Provisioning.deskIdByName(made.deskName), Option.some(made.deskId))
        assert.isTrue(Option.isNone(yield* accounts.clientAccount(unique("nobody"))))
      })
    )

    it.effect("a deactivated client is no longer active; deactivating an unknown one answers false", () =>
      Effect.gen(function* () {
        const accounts = yield* UserAccounts
        const made = yield* provision
        assert.deepStrictEqual(yield* accounts.accountStatus(made.userId, made.clientId, undefined), {
          active: true,
          familyRevoked: false
        })
        assert.isTrue(yield* accounts.deactivateClient(made.clientId))
        assert.isFalse(yield* accounts.deactivateClient(unique("nobody")))
        assert.deepStrictEqual(
          yield* accounts.accountStatuses([{ userId: made.userId, clientId: made.clientId }]),
          [{ active: false, familyRevoked: false }]
        )
      })
    )

    it.effect(
      "users are listed by desk with roles, standing and client ids; a deactivated user stands for no client",
      () =>
        Effect.gen(function* () {
          const accounts = yield* UserAccounts
          const made = yield* provision
          const viewer = yield* accounts.createUser(made.deskId, "viewer one", "viewer")
          const second = yield* accounts.createClient(made.userId, hashSecret)
          yield* accounts.deactivateClient(second.clientId)
          const listed = yield* accounts.listUsers(made.deskId)
          assert.deepStrictEqual(
            listed.map((u) => ({ ...u, name: u.userId === viewer ? u.name : "-" })),
            [
              {
                userId: made.userId,
                name: "-",
                desk: made.deskName,
                roles: ["trader"],
                active: true,
                clients: [
                  { clientId: made.clientId, active: true },
                  { clientId: second.clientId, active: false }
                ]
              },
              {
                userId: viewer,
                name: "viewer one",
                desk: made.deskName,
                roles: ["viewer"],
                active: true,
                clients: []
              }
            ]
          )
          assert.isTrue((yield* accounts.listUsers()).some((u) => u.userId === viewer))
          assert.isTrue(yield* accounts.deactivateUser(made.userId))
          assert.isFalse(yield* accounts.deactivateUser(made.userId + 1_000_000))
          assert.deepStrictEqual(yield* accounts.accountStatus(made.userId, made.clientId, undefined), {
            active: false,
            familyRevoked: false
          })
          assert.isFalse((yield* accounts.listUsers(made.deskId))[0]!.active)
        })
    )

    it.effect(
      "a refresh token rotates once; presenting it again revokes its family, successor included",
      () =>
        Effect.gen(function* () {
          const accounts = yield* UserAccounts
          const sql = yield* SqlClient.SqlClient
          const made = yield* provision
          const first = yield* accounts.startRefreshFamily(made, 1_500)
          assert.strictEqual(first.expiresAt, tokenExpiry(1_500, REFRESH_TOKEN_SECONDS))
          assert.strictEqual(first.expiresAt, (1 + REFRESH_TOKEN_SECONDS) * 1000)
          const rotated = yield* accounts.rotateRefreshToken(first.jti, 2_000)
          assert.strictEqual(rotated._tag, "Rotated")
          if (rotated._tag !== "Rotated") return
          assert.deepStrictEqual(
            { ...rotated.next, jti: "" },
            {
              jti: "",
              family: first.family,
              userId: made.userId,
              clientId: made.clientId,
              expiresAt: first.expiresAt + 1000
            }
          )
          assert.notStrictEqual(rotated.next.jti, first.jti)
          assert.deepStrictEqual(yield* accounts.rotateRefreshToken(first.jti, 3_000), {
            _tag: "Replayed",
            family: first.family
          })
          const rows = yield* sql<{ jti: string; revoked: boolean }>`
          SELECT jti, revoked_at IS NOT NULL AS revoked FROM refresh_tokens WHERE family = ${first.family} ORDER BY created_at`
          assert.deepStrictEqual(rows, [
            { jti: first.jti, revoked: true },
            { jti: rotated.next.jti, revoked: true }
          ])
          const status = yield* accounts.accountStatus(made.userId, made.clientId, first.family)
          assert.deepStrictEqual(status, { active: true, familyRevoked: true })
          assert.deepStrictEqual(yield* accounts.rotateRefreshToken(rotated.next.jti, 3_000), {
            _tag: "Replayed",
            family: first.family
          })
        })
    )

    it.effect("an expired row is Expired and an unknown one Unknown; expired rows can be purged", () =>
      Effect.gen(function* () {
        const accounts = yield* UserAccounts
        const made = yield* provision
        const token = yield* accounts.startRefreshFamily(made, 0)
        assert.deepStrictEqual(yield* accounts.rotateRefreshToken(token.jti, token.expiresAt), {
          _tag: "Expired"
        })
        assert.deepStrictEqual(yield* accounts.rotateRefreshToken(unique("jti"), 0), { _tag: "Unknown" })
        assert.isAtLeast(yield* accounts.deleteExpiredRefreshTokens(token.expiresAt + 1), 1)
        assert.deepStrictEqual(yield* accounts.rotateRefreshToken(token.jti, 0), { _tag: "Unknown" })
      })
    )
  })
})
