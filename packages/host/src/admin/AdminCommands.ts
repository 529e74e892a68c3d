import { NAME_MAX_LENGTH } from "@rfq/engine/api"

/**
 * The admin commands: each with its words, what it does, its arguments and options, as data. The
 * help is rendered from it (`AdminHelp.ts`), the words are parsed against it (`AdminParse.ts`),
 * and what each command does is `AdminExecute.ts`.
 */

export type UserRole = "trader" | "viewer"

export type AdminCommand =
  | { readonly _tag: "DeskCreate"; readonly name: string }
  | { readonly _tag: "DeskList" }
  | { readonly _tag: "UserCreate"; readonly desk: string; readonly name: string; readonly role: UserRole }
  | { readonly _tag: "UserList"; readonly desk: string | undefined }
  | { readonly _tag: "UserDeactivate"; readonly userId: number }
  | { readonly _tag: "ClientCreate"; readonly userId: number }
  | { readonly _tag: "ClientDeactivate"; readonly clientId: string }
  | { readonly _tag: "MakerCreate"; readonly desk: string; readonly makerId: string }
  | {
      readonly _tag: "CounterpartyAdd"
      readonly desk: string
      readonly counterparty: string
      readonly blockTrade: boolean
    }
  | { readonly _tag: "CredentialsRotateKey" }

/** What a desk needs besides users to trade; said by the help and by `desk create`. */
export const CREDENTIALS_HINT =
  "To trade, a desk also needs exchange credentials (a taker to create RFQs and settle, a maker to quote): " +
  "a trader of the desk adds them over the API, POST /v1/account/exchange-credentials with " +
  '{"alias", "exchange": "DBT" or "BULL", "clientId", "clientSecret"} (docs/api.md); ' +
  "the admin command never holds exchange secrets."

export type Kind = "name" | "id" | "role"

export interface Argument {
  readonly name: string
  readonly kind: Kind
  readonly description: string
  readonly optional?: boolean
}

export interface Spec {
  readonly words: string
  readonly summary: string
  readonly description: string
  readonly args: ReadonlyArray<Argument>
  readonly flags?: ReadonlyArray<{ readonly flag: string; readonly description: string }>
  readonly build: (
    values: ReadonlyArray<string | number | undefined>,
    flags: ReadonlySet<string>
  ) => AdminCommand
}

const NAME_RULE = `1 to ${NAME_MAX_LENGTH} characters, not blank, no control characters`
const desk = (description: string): Argument => ({
  name: "desk",
  kind: "name",
  description: `${description}, by name (see desk list)`
})

export const specs: ReadonlyArray<Spec> = [
  {
    words: "desk create",
    summary: "create a desk (a trading firm or team)",
    description: `Creates a desk. Users, API clients and a maker id are added to it next. ${CREDENTIALS_HINT}`,
    args: [{ name: "name", kind: "name", description: `the desk's unique name: ${NAME_RULE}` }],
    build: ([name]) => ({ _tag: "DeskCreate", name: name as string })
  },
  {
    words: "desk list",
    summary: "list the desks, with their maker ids",
    description: "Lists every desk: id, name and maker id (a desk without one is a taker only).",
    args: [],
    build: () => ({ _tag: "DeskList" })
  },
  {
    words: "user create",
    summary: "create a user of a desk",
    description:
      "Creates a user of the desk with one role and prints its id. The user acts through API clients: " +
      "create one next with client create <userId>.",
    args: [
      desk("the user's desk"),
      { name: "name", kind: "name", description: `the user's name: ${NAME_RULE}` },
      {
        name: "role",
        kind: "role",
        description: "trader (creates RFQs, quotes, accepts; manages credentials) or viewer (reads only)"
      }
    ],
    build: ([d, name, role]) => ({
      _tag: "UserCreate",
      desk: d as string,
      name: name as string,
      role: role as UserRole
    })
  },
  {
    words: "user list",
    summary: "list the users: desk, roles, active, client ids (never secrets)",
    description:
      "Lists every user (or the users of one desk): id, name, desk, roles, whether active, and its API " +
      "client ids with their standing. Secrets are never shown: only their hashes are stored.",
    args: [{ ...desk("only the users of this desk"), optional: true }],
    build: ([d]) => ({ _tag: "UserList", desk: d as string | undefined })
  },
  {
    words: "user deactivate",
    summary: "deactivate a user and so every API client of it",
    description:
      "Deactivates the user: its tokens are refused (401 account is inactive), its open WebSocket " +
      "sessions are closed with 4003, and its clients can no longer log in. There is no undo command.",
    args: [{ name: "userId", kind: "id", description: "the user's id (see user list)" }],
    build: ([userId]) => ({ _tag: "UserDeactivate", userId: userId as number })
  },
  {
    words: "client create",
    summary: "create an API client of a user (its secret is shown once)",
    description:
      "Creates an API client of the user and prints its clientId and clientSecret. The secret is shown " +
      "this once (only its hash is stored); the client logs in at once with POST /v1/auth or /oauth/token.",
    args: [{ name: "userId", kind: "id", description: "the user's id (see user list)" }],
    build: ([userId]) => ({ _tag: "ClientCreate", userId: userId as number })
  },
  {
    words: "client deactivate",
    summary: "deactivate an API client",
    description:
      "Deactivates the client: its tokens are refused (401 account is inactive), its open WebSocket " +
      "sessions are closed with 4003, and it can no longer log in. Other clients of the user keep working.",
    args: [{ name: "clientId", kind: "name", description: "the client's id (see user list)" }],
    build: ([clientId]) => ({ _tag: "ClientDeactivate", clientId: clientId as string })
  },
  {
    words: "maker create",
    summary: "make a desk a maker under a maker id",
    description:
      "Makes the desk a maker: takers can then name it in RFQs, and its traders quote. One maker id per desk.",
    args: [
      desk("the desk"),
      { name: "makerId", kind: "name", description: `the maker id takers will see: ${NAME_RULE}` }
    ],
    build: ([d, makerId]) => ({ _tag: "MakerCreate", desk: d as string, makerId: makerId as string })
  },
  {
    words: "counterparty add",
    summary: "list a desk as an OTC counterparty of another",
    description:
      "Lists <counterparty> as an OTC counterparty of <desk> (GET /v1/account/otc-counterparty), allowing " +
      "block trades unless --no-block-trade; run it again to change the flag.",
    args: [desk("the desk whose list grows"), { ...desk("the counterparty desk"), name: "counterparty" }],
    flags: [{ flag: "--no-block-trade", description: "the counterparty may not use bulk block trades" }],
    build: ([d, counterparty], flags) => ({
      _tag: "CounterpartyAdd",
      desk: d as string,
      counterparty: counterparty as string,
      blockTrade: !flags.has("--no-block-trade")
    })
  },
  {
    words: "credentials rotate-key",
    summary: "re-encrypt every stored exchange secret under the newest key",
    description:
      "Re-encrypts every stored exchange-credentials secret under the highest version of the key ring " +
      "(ENCRYPTION_KEYS; through a running host, the host's ring), all or nothing, and prints how many " +
      "rows it rewrote; a second run rewrites 0. Then the older keys can be retired.",
    args: [],
    build: () => ({ _tag: "CredentialsRotateKey" })
  }
]
