import { randomBytes } from "node:crypto"
import * as SqlClient from "@effect/sql/SqlClient"
import { makeDatabaseLayer, makeSecretBox, SecretBoxLive, seedDemoData } from "@rfq/engine"
import { Effect } from "effect"
import { credentialsAad, rotateCredentialsKey } from "./KeyRotation.js"

/**
 * Key rotation on a real (embedded) database with the demo data: every secret reads the same after
 * rotating from key version 1 to 2; every row then carries version 2; the old key alone can read
 * none of them; a second rotation changes nothing; and a rotation that meets a tampered row writes
 * nothing at all.
 */
export interface RotationFigures {
  rows: number
  lostOrChanged: number
  notOnNewVersion: number
  readableWithOldKeyOnly: number
  secondRunRotated: number
  partialWritesOnTamper: number
}

type Row = { id: number; aad: string; sealed: Uint8Array }

const rowsOf = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  const rows = yield* sql<{
    id: number | string
    deskId: number | string
    alias: string
    sealed: Uint8Array
  }>`
    SELECT id, desk_id AS "deskId", alias, client_secret_encrypted AS sealed FROM exchange_credentials ORDER BY id`
  return rows.map(
    (r): Row => ({
      id: Number(r.id),
      aad: credentialsAad(Number(r.deskId), r.alias),
      sealed: new Uint8Array(r.sealed)
    })
  )
})

export const runRotationCheck = (): Promise<RotationFigures> => {
  const k1 = new Uint8Array(randomBytes(32))
  const k2 = new Uint8Array(randomBytes(32))
  const old = makeSecretBox(new Map([[1, k1]]))
  const both = makeSecretBox(
    new Map([
      [1, k1],
      [2, k2]
    ])
  )
  const onlyNew = makeSecretBox(new Map([[2, k2]]))
  const program = Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    yield* seedDemoData({ hashSecret: (s) => Effect.succeed(`test-only:${s}`) }).pipe(
      Effect.provide(SecretBoxLive(new Map([[1, k1]])))
    )
    const before = yield* rowsOf
    const plain = new Map<number, string>()
    for (const r of before) plain.set(r.id, yield* old.open(r.sealed, r.aad))

    yield* rotateCredentialsKey(old, both)
    const after = yield* rowsOf
    let lostOrChanged = 0
    let notOnNewVersion = 0
    let readableWithOldKeyOnly = 0
    for (const r of after) {
      const opened = yield* Effect.either(onlyNew.open(r.sealed, r.aad))
      if (opened._tag === "Left" || opened.right !== plain.get(r.id)) lostOrChanged++
      if (r.sealed[0] !== 2) notOnNewVersion++
      if ((yield* Effect.either(old.open(r.sealed, r.aad)))._tag === "Right") readableWithOldKeyOnly++
    }
    if (after.length !== before.length) lostOrChanged += Math.abs(after.length - before.length)
    const second = yield* rotateCredentialsKey(both, both)

    // A third key, and one row tampered with: the rotation must refuse and write nothing.
    const k3 = makeSecretBox(
      new Map([
        [2, k2],
        [3, new Uint8Array(randomBytes(32))]
      ])
    )
    const victim = after[after.length - 1]!
    const broken = new Uint8Array(victim.sealed)
    broken[broken.length - 1]! ^= 1
    yield* sql`UPDATE exchange_credentials SET client_secret_encrypted = ${broken} WHERE id = ${victim.id}`
    const refused = yield* Effect.either(rotateCredentialsKey(onlyNew, k3))
    const untouched = yield* rowsOf
    const partialWritesOnTamper =
      (refused._tag === "Right" ? 1 : 0) +
      untouched.filter((r) => r.id !== victim.id && r.sealed[0] !== 2).length
    return {
      rows: before.length,
      lostOrChanged,
      notOnNewVersion,
      readableWithOldKeyOnly,
      secondRunRotated: second.rotated,
      partialWritesOnTamper
    }
  })
  return Effect.runPromise(
    program.pipe(Effect.provide(makeDatabaseLayer({ kind: "pglite", dataDir: "memory://" })), Effect.orDie)
  )
}
