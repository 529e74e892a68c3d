import { randomBytes, randomInt } from "node:crypto"
import { ApiClient, type ApiClientOptions } from "./ApiClient.js"
import { expectOk } from "./Shapes.js"

/**
 * What every scenario runs against: a base URL, the demo clients logged in, their credentials ids
 * by alias, and a run tag so that labels, aliases, nonces and request ids never collide with an
 * earlier run against the same deployment.
 */

/** The contract's demo data: every deployment the suite checks must have it (`DEMO=1`). */
export const demoClients = {
  taker: "demo-taker",
  viewer: "demo-viewer",
  maker1: "demo-maker-1",
  maker2: "demo-maker-2",
  maker3: "demo-maker-3"
} as const

export type Party = keyof typeof demoClients
export type TraderParty = Exclude<Party, "viewer">
export const parties = Object.keys(demoClients) as ReadonlyArray<Party>
export const traders: ReadonlyArray<TraderParty> = ["taker", "maker1", "maker2", "maker3"]

export const secretOf = (clientId: string) => `${clientId}-secret`

export const makerIds = { maker1: "maker-1", maker2: "maker-2", maker3: "maker-3" } as const
export type MakerParty = keyof typeof makerIds

export interface World {
  readonly api: ApiClient
  /** Unique to this run: part of every label, alias and nonce the suite creates. */
  readonly tag: string
  readonly token: (party: Party) => string
  /** The party's exchange credentials id under `alias` (demo data). */
  readonly credentialsId: (party: TraderParty, alias: string) => number
  /** A fresh idempotency key for `POST /rfq/{id}`. */
  readonly nextRequestId: () => number
  /** Logs every party in again (after a restart, tokens stay valid; this checks nothing). */
  readonly relogin: () => Promise<void>
}

/** A 3600 s access token from `POST /v1/auth`. */
export const login = async (api: ApiClient, clientId: string): Promise<string> => {
  const response = await api.post("/v1/auth", {
    json: { clientId, clientSecret: secretOf(clientId) }
  })
  return expectOk<{ access_token: string }>(response, "AuthResponse").access_token
}

export const openWorld = async (baseUrl: string, options: ApiClientOptions = {}): Promise<World> => {
  const api = new ApiClient(baseUrl, { retryOnRateLimit: true, ...options })
  const tokens = new Map<Party, string>()
  const credentials = new Map<TraderParty, Map<string, number>>()
  const loginAll = async () => {
    for (const party of parties) tokens.set(party, await login(api, demoClients[party]))
  }
  await loginAll()
  const token = (party: Party) => tokens.get(party)!
  for (const party of traders) {
    const list = expectOk<Array<{ alias: string; credentialsId: number }>>(
      await api.get("/v1/account/exchange-credentials", { token: token(party) }),
      "ExchangeCredentialsList"
    )
    credentials.set(party, new Map(list.map((c) => [c.alias, c.credentialsId])))
  }
  // Request ids are per user and forever: start each run somewhere no earlier run has been.
  let requestId = randomInt(1, 2 ** 40) * 1000
  return {
    api,
    tag: randomBytes(4).toString("hex"),
    token,
    credentialsId: (party, alias) => {
      const id = credentials.get(party)?.get(alias)
      if (id === undefined) throw new Error(`${demoClients[party]} has no exchange credentials "${alias}"`)
      return id
    },
    nextRequestId: () => ++requestId,
    relogin: loginAll
  }
}
