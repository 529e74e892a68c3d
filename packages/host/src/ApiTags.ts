/**
 * The areas of the API, as tags of the OpenAPI document and the AsyncAPI document, so a generated
 * client and the rendered documentation group operations the way docs/api.md does. An operation's
 * area follows from its JSON-RPC name; a name under a prefix not listed here still gets a tag (its
 * second segment), so a new operation is never untagged.
 */

export interface ApiTag {
  readonly name: string
  readonly description: string
}

const areas: ReadonlyArray<{ readonly prefix: string; readonly tag: ApiTag }> = [
  {
    prefix: "v1/quote/",
    tag: { name: "Quotes", description: "A maker's quotes: create, update, delete, cancel, list." }
  },
  {
    prefix: "v1/rfq/",
    tag: {
      name: "RFQs",
      description: "Requests for quote: create, list, cancel, the taker's quote book, accept, leg prices."
    }
  },
  {
    prefix: "v1/exchange/",
    tag: { name: "Reference data", description: "Makers and the instruments usable as legs." }
  },
  {
    prefix: "v1/account/",
    tag: {
      name: "Account",
      description: "The desk's exchange credentials and OTC counterparties (role `trader` only)."
    }
  },
  {
    prefix: "v1/block-trade/",
    tag: { name: "Block trades", description: "Block trades between two sets of credentials." }
  },
  {
    prefix: "v1/trades/",
    tag: { name: "Trades", description: "The public block-trade tape." }
  },
  {
    prefix: "v1/mmp",
    tag: { name: "Market-maker protection", description: "A maker's limits and the freeze they trigger." }
  }
]

/** The token endpoints and the session's `auth` methods. */
export const authenticationTag: ApiTag = {
  name: "Authentication",
  description: "Access tokens from client credentials, and their refresh (docs/auth.md)."
}

/** The WebSocket session's own methods: heartbeat, channels, cancel-on-disconnect. */
export const sessionTag: ApiTag = {
  name: "Session",
  description: "The WebSocket session: heartbeat, subscriptions, cancel-on-disconnect (docs/websocket.md)."
}

/** The area of the operation whose JSON-RPC name is `rpc`. */
export const tagOf = (rpc: string): ApiTag => {
  const known = areas.find((area) => rpc.startsWith(area.prefix))
  if (known !== undefined) return known.tag
  const segment = rpc.split("/")[1] ?? rpc
  return {
    name: segment.charAt(0).toUpperCase() + segment.slice(1),
    description: `Operations under \`/v1/${segment}\`.`
  }
}

/** The distinct tags among `tags`, in first-use order. */
export const tagsUsed = (tags: ReadonlyArray<ApiTag>): Array<ApiTag> => {
  const seen = new Map<string, ApiTag>()
  for (const tag of tags) if (!seen.has(tag.name)) seen.set(tag.name, tag)
  return [...seen.values()]
}
