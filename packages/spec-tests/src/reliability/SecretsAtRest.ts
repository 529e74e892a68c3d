import { execFileSync } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { randomBytes } from "node:crypto"
import { makeSecretBox } from "@rfq/engine"
import { Effect } from "effect"
import { openDatabase, pgUrl, type Place } from "./DatabaseReader.js"
import type { Backend, RunningHost } from "./HostProcess.js"
import { credentialsOf, Desk } from "./Lifecycle.js"

/**
 * Secrets at rest against the real host: every client secret the API can reveal (decrypted, to
 * its owner) and a freshly stored one are searched for in a dump of the database (pg_dump for
 * PostgreSQL; every byte of the data directory for PGlite) — in UTF-8, hex and base64; the API
 * clients' own secrets too. On PostgreSQL the stored ciphertexts are then attacked in place: one
 * flipped bit per position class (version, IV, body, tag) and a ciphertext swapped between two rows
 * must each be refused by the API, never decrypted.
 */
export interface SecretsFigures {
  plaintextsInDump: number
  searched: number
  tamperedAccepted: number
  tamperCases: number
  problems: Array<string>
}

const forms = (secret: string) => [
  Buffer.from(secret, "utf8"),
  Buffer.from(Buffer.from(secret, "utf8").toString("hex"), "utf8"),
  Buffer.from(Buffer.from(secret, "utf8").toString("base64").replace(/=+$/, ""), "utf8")
]

/** The secrets to look for, read as their owners can read them. */
export const knownSecrets = async (base: string) => {
  const secrets: Array<string> = []
  for (const clientId of ["demo-taker", "demo-maker-1", "demo-maker-2", "demo-maker-3"]) {
    const desk = await Desk.login(base, clientId)
    secrets.push(`${clientId}-secret`)
    for (const c of await credentialsOf(desk)) {
      const detail = await desk.request("GET", `/v1/account/exchange-credentials/${c.credentialsId}`)
      const secret = (detail.body as { clientSecret?: string }).clientSecret
      if (typeof secret === "string") secrets.push(secret)
    }
  }
  return secrets
}

/** Stores credentials with a recognisable secret; returns it and their id. */
export const storeMarkedSecret = async (base: string) => {
  const taker = await Desk.login(base, "demo-taker")
  const secret = `marked-${randomBytes(12).toString("hex")}`
  const created = await taker.request("POST", "/v1/account/exchange-credentials", {
    alias: `rest-${randomBytes(4).toString("hex")}`,
    exchange: "DBT",
    clientId: "at-rest-check",
    clientSecret: secret
  })
  if (created.status !== 200) throw new Error(`create credentials: ${created.status} ${created.text}`)
  return { secret, id: (created.body as { credentialsId: number }).credentialsId }
}

const readTree = (dir: string): Buffer =>
  Buffer.concat(
    fs
      .readdirSync(dir, { withFileTypes: true, recursive: true })
      .filter((e) => e.isFile())
      .map((e) => fs.readFileSync(path.join(e.parentPath, e.name)))
  )

export const dumpOf = (backend: Backend, place: Place): Buffer =>
  backend === "pglite"
    ? readTree(path.join(place.dataDir, "pglite"))
    : execFileSync("pg_dump", ["--no-owner", `--schema=${place.schema}`, pgUrl()], {
        maxBuffer: 512 * 1024 * 1024
      })

export const searchDump = (dump: Buffer, secrets: ReadonlyArray<string>) =>
  secrets.filter((s) => forms(s).some((form) => dump.includes(form)))

/** Flips and swaps ciphertexts under a running PostgreSQL host, checking the API each time. */
export const tamperCiphertexts = async (host: RunningHost, place: Place, figures: SecretsFigures) => {
  const taker = await Desk.login(host.url, "demo-taker")
  const own = await credentialsOf(taker)
  const db = await openDatabase("postgres", place)
  try {
    const [a, b] = own
    if (a === undefined || b === undefined) throw new Error("the taker needs two credentials")
    const row = async (id: number) =>
      (
        await db.query<{ sealed: Buffer }>(
          `SELECT client_secret_encrypted AS sealed FROM exchange_credentials WHERE id = $1`,
          [id]
        )
      )[0]!.sealed
    const original = await row(a.credentialsId)
    const plainA = (
      (await taker.request("GET", `/v1/account/exchange-credentials/${a.credentialsId}`)).body as {
        clientSecret: string
      }
    ).clientSecret
    const attempt = async (name: string, sealed: Buffer) => {
      await db.query(`UPDATE exchange_credentials SET client_secret_encrypted = $1 WHERE id = $2`, [
        sealed,
        a.credentialsId
      ])
      const answer = await taker.request("GET", `/v1/account/exchange-credentials/${a.credentialsId}`)
      figures.tamperCases++
      const leaked = answer.status === 200 || answer.text.includes(plainA)
      if (leaked) {
        figures.tamperedAccepted++
        figures.problems.push(`${name}: ${answer.status} ${answer.text.slice(0, 160)}`)
      }
      // A flipped version byte names a key that does not exist: the spec's `encryption key not
      // found` is a 500. Any other 5xx is noted.
      const message = (answer.body as { message?: string } | undefined)?.message
      if (answer.status >= 500 && message !== "encryption key not found")
        figures.problems.push(`${name}: refused with ${answer.status} ${message ?? ""}`)
    }
    // One bit in each part of the sealed form (version, IV, body, tag) and every bit of its last byte.
    const last = original.length - 1
    const bits = [
      3,
      8 + 3,
      13 * 8 + 3,
      (original.length - 16) * 8 + 3,
      ...Array.from({ length: 8 }, (_, i) => last * 8 + i)
    ]
    for (const bit of bits) {
      const flipped = Buffer.from(original)
      flipped[Math.floor(bit / 8)]! ^= 1 << (bit % 8)
      await attempt(`bit ${bit} flipped`, flipped)
    }
    await attempt("ciphertext of another row", await row(b.credentialsId))
    await attempt("truncated tag", original.subarray(0, original.length - 4))
    await attempt("empty", Buffer.alloc(0))
    await db.query(`UPDATE exchange_credentials SET client_secret_encrypted = $1 WHERE id = $2`, [
      original,
      a.credentialsId
    ])
    const restored = await taker.request("GET", `/v1/account/exchange-credentials/${a.credentialsId}`)
    if ((restored.body as { clientSecret?: string }).clientSecret !== plainA)
      figures.problems.push("restored row does not read back")
  } finally {
    await db.close()
  }
}

/** The SecretBox alone: every single-bit flip of a sealed value is refused (exhaustive). */
export const exhaustiveBitFlips = (): { cases: number; accepted: number } => {
  const box = makeSecretBox(new Map([[1, new Uint8Array(randomBytes(32))]]))
  const sealed = Effect.runSync(box.seal("a client secret", "credentials:1:main"))
  let accepted = 0
  for (let bit = 0; bit < sealed.length * 8; bit++) {
    const copy = new Uint8Array(sealed)
    copy[Math.floor(bit / 8)]! ^= 1 << (bit % 8)
    const opened = Effect.runSync(Effect.either(box.open(copy, "credentials:1:main")))
    if (opened._tag === "Right") accepted++
  }
  return { cases: sealed.length * 8, accepted }
}
